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
  // The cutoff comes from the database clock: the rows' timestamps were written by it.
  const cutoff = `now() - $1 * interval '1 millisecond'`;
  const old = options.includeDeadLetters
    ? `(processed_at < ${cutoff} OR (processed_at IS NULL AND dead_lettered_at < ${cutoff}))`
    : `processed_at < ${cutoff}`;
  let total = 0;
  for (;;) {
    const result = await db.query(
      `DELETE FROM ${t} WHERE ctid = ANY(ARRAY(SELECT ctid FROM ${t} WHERE ${old} LIMIT $2))`,
      [options.olderThanMs, options.batchSize],
    );
    const deleted = result.rowCount ?? 0;
    total += deleted;
    if (deleted > 0) options.onBatch?.(total);
    if (deleted < options.batchSize) return total;
  }
}
