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
 * The select list that returns an OutboxRow: jsonb as its text (never parsed) and
 * created_at as text, converted to ISO 8601 with microseconds by toIsoTimestamp (the same path as WAL mode).
 * The table is aliased `o`: refer to `o.seq` in WHERE and ORDER BY, since a bare `seq` in ORDER BY would sort
 * by the text output column.
 */
export function selectOutboxRow(schema: string, table: string): string {
  return `SELECT o.id::text AS id, o.aggregate_type, o.aggregate_id, o.event_type, o.payload::text AS payload,
                 o.headers::text AS headers, o.created_at::text AS created_at, o.seq::text AS seq
            FROM ${quoteQualified(schema, table)} AS o`;
}

export { MAX_BATCH_BYTES } from '../core/maxBatchBytes.js';

/**
 * Like selectOutboxRow, for the rows matching `where` in seq order, at most `limit` of them, cut where their
 * payloads and headers pass `maxBytes` (SQL expressions, usually parameters). The cut is made by the server,
 * so the rows left out never reach us. `forUpdate` locks the rows considered.
 */
export function selectOutboxRowsWithinBytes(
  schema: string,
  table: string,
  options: { where: string; limit: string; maxBytes: string; forUpdate?: boolean },
): string {
  return `SELECT id, aggregate_type, aggregate_id, event_type, payload, headers, created_at, seq
    FROM (SELECT r.*, sum(r.bytes) OVER (ORDER BY r.seq_order) AS running
            FROM (SELECT o.id::text AS id, o.aggregate_type, o.aggregate_id, o.event_type, x.payload, x.headers,
                         o.created_at::text AS created_at, o.seq::text AS seq, o.seq AS seq_order,
                         octet_length(x.payload) + coalesce(octet_length(x.headers), 0) AS bytes
                    FROM ${quoteQualified(schema, table)} AS o,
                         LATERAL (SELECT o.payload::text AS payload, o.headers::text AS headers) AS x
                   WHERE ${options.where}
                   ORDER BY o.seq
                   LIMIT ${options.limit}${options.forUpdate === true ? '\n                     FOR UPDATE OF o' : ''}) AS r) AS w
   WHERE w.running - w.bytes < ${options.maxBytes}
   ORDER BY w.seq_order`;
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
