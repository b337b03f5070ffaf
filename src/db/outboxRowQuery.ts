import { toIsoTimestamp } from '../core/formatPgTimestamp.js';
import type { OutboxRecord } from '../core/outboxRecord.js';
import { quoteQualified } from './quoteIdentifier.js';

/** An outbox row with every value as text, the shape both modes turn into an OutboxRecord. */
export interface OutboxRow {
  readonly id: string;
  readonly aggregate_type: string;
  readonly aggregate_id: string;
  readonly event_type: string;
  readonly payload: string;
  readonly headers: string | null;
  readonly created_at: string;
  readonly seq: string;
}

/**
 * The select list that returns an OutboxRow: jsonb as its text (never parsed, SPEC §Kafka message) and
 * created_at as text, converted to ISO 8601 with microseconds by toIsoTimestamp (the same path as WAL mode).
 * The table is aliased `o`: refer to `o.seq` in WHERE and ORDER BY, since a bare `seq` in ORDER BY would sort
 * by the text output column.
 */
export function selectOutboxRow(schema: string, table: string): string {
  return `SELECT o.id::text AS id, o.aggregate_type, o.aggregate_id, o.event_type, o.payload::text AS payload,
                 o.headers::text AS headers, o.created_at::text AS created_at, o.seq::text AS seq
            FROM ${quoteQualified(schema, table)} AS o`;
}

export function toRecord(row: OutboxRow): OutboxRecord {
  return {
    id: row.id,
    aggregateType: row.aggregate_type,
    aggregateId: row.aggregate_id,
    eventType: row.event_type,
    payload: row.payload,
    headers: row.headers,
    createdAt: toIsoTimestamp(row.created_at),
    seq: row.seq,
  };
}
