import { createHash } from 'node:crypto';

import { DEFAULT_COLUMNS, type OutboxColumns } from './outboxColumns.js';

/** Names derived from the configured schema and table, so several outboxes can share one schema. */
export interface OutboxNames {
  readonly schema: string;
  readonly table: string;
  readonly columns: OutboxColumns;
  /** outbox_events → outbox_dead_letters; other tables get <table>_dead_letters. */
  readonly deadLettersView: string;
  readonly pendingIndex: string;
  readonly deadLettersIndex: string;
  /** Pending rows waiting for a retry, by aggregate (poll mode). */
  readonly waitingIndex: string;
  readonly migrationsTable: string;
  readonly processedEventsTable: string;
  /** Poll mode's NOTIFY channel, also the trigger function's name. */
  readonly notifyChannel: string;
  readonly notifyFunction: string;
}

/** NOTIFY channel names are identifiers (63 bytes at most): a short, stable one per outbox table. */
export function notifyChannel(schema: string, table: string): string {
  return `walbox_${createHash('md5').update(`${schema}.${table}`).digest('hex').slice(0, 16)}`;
}

export function deriveOutboxNames(
  schema: string,
  table: string,
  columns: OutboxColumns = DEFAULT_COLUMNS,
): OutboxNames {
  const stem = table.endsWith('_events') ? table.slice(0, -'_events'.length) : table;
  return {
    schema,
    table,
    columns,
    deadLettersView: `${stem}_dead_letters`,
    pendingIndex: `${table}_pending_idx`,
    deadLettersIndex: `${table}_dead_idx`,
    waitingIndex: `${table}_waiting_idx`,
    migrationsTable: 'walbox_migrations',
    processedEventsTable: 'processed_events',
    notifyChannel: notifyChannel(schema, table),
    notifyFunction: notifyChannel(schema, table),
  };
}
