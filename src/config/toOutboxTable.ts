import type { OutboxTable } from '../outbox/outboxColumns.js';
import type { RelayConfig } from './relayConfig.js';

/** The outbox table and its columns as the configuration names them. */
export function toOutboxTable(config: RelayConfig): OutboxTable {
  return {
    schema: config.schema,
    table: config.table,
    columns: {
      id: config.idColumn,
      aggregateType: config.routingColumn,
      aggregateId: config.keyColumn,
      eventType: config.eventTypeColumn,
      payload: config.payloadColumn,
      timestamp: config.timestampColumn,
      headerColumns: config.headerColumns,
    },
  };
}
