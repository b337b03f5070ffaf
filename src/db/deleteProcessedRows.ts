import type pg from 'pg';

import { quoteQualified } from './quoteIdentifier.js';

/**
 * Deletes rows processed more than `olderThanMs` ago, `batchSize` at a time (short transactions, no long locks,
 * autovacuum keeps up); with `includeDeadLetters`, also dead letters that old. Pending rows are never touched.
 * Returns how many rows were deleted.
 */
export async function deleteProcessedRows(
  db: pg.ClientBase | pg.Pool,
  options: {
    readonly schema: string;
    readonly table: string;
    readonly olderThanMs: number;
    readonly batchSize: number;
    readonly includeDeadLetters: boolean;
    readonly onBatch?: (deleted: number) => void;
  },
): Promise<number> {
  const t = quoteQualified(options.schema, options.table);
  const old = describeOldRows(options.includeDeadLetters, '$1');
  // By physical address: a TID scan, no index on processed_at needed. A ctid is unique within one heap only, and
  // a partitioned table has one heap per partition: the same ctid in another partition may be a pending row, so
  // rows are matched by (tableoid, ctid). The ctid list still drives a TID scan of each partition (of the one
  // heap of a plain table); the pairs then pick the right rows out of it.
  const statement = `
    WITH batch AS MATERIALIZED (SELECT tableoid AS rel, ctid AS tid FROM ${t} WHERE ${old} LIMIT $2)
    DELETE FROM ${t}
     WHERE ctid = ANY(ARRAY(SELECT tid FROM batch))
       AND (tableoid, ctid) IN (SELECT rel, tid FROM batch)`;
  let total = 0;
  for (;;) {
    const result = await db.query(statement, [options.olderThanMs, options.batchSize]);
    const deleted = result.rowCount ?? 0;
    total += deleted;
    if (deleted > 0) options.onBatch?.(total);
    if (deleted < options.batchSize) return total;
  }
}

/**
 * The rows cleanup may remove, as a condition on the outbox's columns: processed (or, with `includeDeadLetters`,
 * dead-lettered) more than `olderThanMs` ago, the parameter holding milliseconds. Pending rows never qualify.
 */
export function describeOldRows(includeDeadLetters: boolean, olderThanMs: string): string {
  // The cutoff comes from the database clock: the rows' timestamps were written by it.
  const cutoff = `now() - ${olderThanMs} * interval '1 millisecond'`;
  return includeDeadLetters
    ? `(processed_at < ${cutoff} OR (processed_at IS NULL AND dead_lettered_at < ${cutoff}))`
    : `processed_at < ${cutoff}`;
}
