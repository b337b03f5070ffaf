import { toIsoTimestamp } from '../core/formatPgTimestamp.js';
import type { OutboxRecord } from '../core/outboxRecord.js';
import { parseEventTime } from '../core/parseEventTime.js';
import type { OutboxColumns, OutboxTable } from '../outbox/outboxColumns.js';
import { quoteIdentifier, quoteQualified } from './quoteIdentifier.js';

/** An outbox row with every value as text, the shape both modes turn into an OutboxRecord. */
export interface OutboxRow {
  readonly id: string;
  /** NULL only where a column is nullable (Debezium's payload, or one made nullable by hand). */
  readonly aggregate_type: string | null;
  readonly aggregate_id: string | null;
  readonly event_type: string | null;
  readonly payload: string | null;
  readonly headers: string | null;
  readonly created_at: string | null;
  readonly event_time: string | null;
  readonly header_values: (string | null)[];
  readonly seq: string;
}

/** The configured event columns of alias `o`, quoted: `o."aggregateid"`. */
export function referToColumns(
  columns: OutboxColumns,
): Record<'id' | 'aggregateType' | 'aggregateId' | 'eventType' | 'payload' | 'timestamp', string> {
  const refer = (column: string): string => `o.${quoteIdentifier(column)}`;
  return {
    id: refer(columns.id),
    aggregateType: refer(columns.aggregateType),
    aggregateId: refer(columns.aggregateId),
    eventType: refer(columns.eventType),
    payload: refer(columns.payload),
    timestamp: refer(columns.timestamp),
  };
}

/**
 * The select list of an OutboxRow from alias `o`, whatever the table's column names: jsonb as its text (never
 * parsed), timestamps as text, converted by toIsoTimestamp and parseEventTime (the same path as WAL mode).
 */
function selectList(columns: OutboxColumns, payload: string, headers: string): string {
  const c = referToColumns(columns);
  const headerValues = columns.headerColumns.map((h) => `o.${quoteIdentifier(h.column)}::text`);
  return `${c.id}::text AS id, ${c.aggregateType}::text AS aggregate_type, ${c.aggregateId}::text AS aggregate_id,
          ${c.eventType}::text AS event_type, ${payload} AS payload, ${headers} AS headers,
          o.created_at::text AS created_at, ${c.timestamp}::text AS event_time,
          ARRAY[${headerValues.join(', ')}]::text[] AS header_values, o.seq::text AS seq`;
}

export { MAX_BATCH_BYTES } from '../core/maxBatchBytes.js';

/**
 * The OutboxRows matching `where` (on alias `o`) in seq order, at most `limit` of them, cut where their
 * payloads and headers pass `maxBytes` (SQL expressions, usually parameters). The cut is made by the server,
 * so the rows left out never reach us. `forUpdate` locks the rows considered. Refer to `o.seq` in `where`,
 * never a bare `seq`: that would be the text output column.
 */
export function selectOutboxRowsWithinBytes(
  outbox: OutboxTable,
  options: { where: string; limit: string; maxBytes: string; forUpdate?: boolean },
): string {
  const payload = `${referToColumns(outbox.columns).payload}::text`;
  return `SELECT id, aggregate_type, aggregate_id, event_type, payload, headers, created_at, event_time,
                 header_values, seq
    FROM (SELECT r.*, sum(r.bytes) OVER (ORDER BY r.seq_order) AS running
            FROM (SELECT ${selectList(outbox.columns, 'x.payload', 'x.headers')}, o.seq AS seq_order,
                         coalesce(octet_length(x.payload), 0) + coalesce(octet_length(x.headers), 0) AS bytes
                    FROM ${quoteQualified(outbox.schema, outbox.table)} AS o,
                         LATERAL (SELECT ${payload} AS payload, o.headers::text AS headers) AS x
                   WHERE ${options.where}
                   ORDER BY o.seq
                   LIMIT ${options.limit}${options.forUpdate === true ? '\n                     FOR UPDATE OF o' : ''}) AS r) AS w
   WHERE w.running - w.bytes < ${options.maxBytes}
   ORDER BY w.seq_order`;
}

/**
 * The record of a row read from the table. A NULL where a value is needed (a column made nullable by hand) makes
 * a record with a `problem`: it is dead-lettered, as in WAL mode. A NULL payload is a tombstone.
 */
export function toRecord(row: OutboxRow): OutboxRecord {
  const nulls: string[] = [];
  const valueOf = (column: 'aggregate_type' | 'aggregate_id' | 'event_type' | 'created_at'): string => {
    const value = row[column];
    if (value === null) nulls.push(column);
    return value ?? '';
  };
  const record: OutboxRecord = {
    id: row.id,
    aggregateType: valueOf('aggregate_type'),
    aggregateId: valueOf('aggregate_id'),
    eventType: valueOf('event_type'),
    payload: row.payload,
    headers: row.headers,
    createdAt: toIsoTimestamp(valueOf('created_at')),
    eventTimeMs: row.event_time === null ? undefined : parseEventTime(row.event_time),
    headerValues: row.header_values,
    seq: row.seq,
  };
  return nulls.length === 0 ? record : { ...record, problem: `column ${nulls.join(', ')} is NULL` };
}
