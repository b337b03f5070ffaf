import type pg from 'pg';

import type { OutboxRecord } from '../core/outboxRecord.js';
import { MAX_BATCH_BYTES, selectOutboxRowsWithinBytes, toRecord, type OutboxRow } from './outboxRowQuery.js';
import type { OutboxTable } from '../outbox/outboxColumns.js';
import { quoteIdentifier, quoteQualified } from './quoteIdentifier.js';

/** Which processed events `walbox replay` publishes again. */
export type ReplaySelection =
  | { readonly kind: 'ids'; readonly ids: readonly string[] }
  | { readonly kind: 'time'; readonly since: string; readonly until: string }
  | { readonly kind: 'seq'; readonly from: string; readonly to: string };

export interface ReplaySummary {
  readonly events: number;
  readonly aggregates: number;
  readonly firstSeq: string | null;
  readonly lastSeq: string | null;
}

/**
 * The WHERE clause (on alias `o`) and its values: processed rows only. Dead letters are re-driven with
 * `walbox dlq retry`, and pending rows are the relay's.
 */
function where(outbox: OutboxTable, selection: ReplaySelection): { sql: string; values: unknown[] } {
  const processed = 'o.processed_at IS NOT NULL';
  switch (selection.kind) {
    case 'ids':
      return {
        sql: `${processed} AND o.${quoteIdentifier(outbox.columns.id)} = ANY($1::uuid[])`,
        values: [selection.ids],
      };
    case 'time':
      return {
        sql: `${processed} AND o.created_at >= $1::timestamptz AND o.created_at < $2::timestamptz`,
        values: [selection.since, selection.until],
      };
    case 'seq':
      return {
        sql: `${processed} AND o.seq BETWEEN $1::bigint AND $2::bigint`,
        values: [selection.from, selection.to],
      };
  }
}

export async function summarizeReplay(
  db: pg.ClientBase,
  outbox: OutboxTable,
  selection: ReplaySelection,
): Promise<ReplaySummary> {
  const selected = where(outbox, selection);
  const { rows } = await db.query<{
    events: string;
    aggregates: string;
    first: string | null;
    last: string | null;
  }>(
    `SELECT count(*)::text AS events, count(DISTINCT (o.${quoteIdentifier(outbox.columns.aggregateType)}, o.${quoteIdentifier(outbox.columns.aggregateId)}))::text AS aggregates,
            min(o.seq)::text AS first, max(o.seq)::text AS last
       FROM ${quoteQualified(outbox.schema, outbox.table)} AS o WHERE ${selected.sql}`,
    selected.values,
  );
  const row = rows[0];
  return {
    events: Number(row?.events ?? 0),
    aggregates: Number(row?.aggregates ?? 0),
    firstSeq: row?.first ?? null,
    lastSeq: row?.last ?? null,
  };
}

/**
 * The next selected rows after `afterSeq`, in seq order (so each aggregate's events keep their order), at most
 * `limit` rows and MAX_BATCH_BYTES of payload (the first row always).
 */
export async function readReplayBatch(
  db: pg.ClientBase,
  outbox: OutboxTable,
  selection: ReplaySelection,
  afterSeq: string,
  limit: number,
): Promise<OutboxRecord[]> {
  const selected = where(outbox, selection);
  const values = [...selected.values, afterSeq];
  const { rows } = await db.query<OutboxRow>(
    selectOutboxRowsWithinBytes(outbox, {
      where: `${selected.sql} AND o.seq > $${String(values.length)}::bigint`,
      limit: String(limit),
      maxBytes: String(MAX_BATCH_BYTES),
    }),
    values,
  );
  return rows.map(toRecord);
}
