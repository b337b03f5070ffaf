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
  const old = options.includeDeadLetters
    ? `(processed_at < $1 OR (processed_at IS NULL AND dead_lettered_at < $1))`
    : `processed_at < $1`;
  const cutoff = new Date(Date.now() - options.olderThanMs).toISOString();
  let total = 0;
  for (;;) {
    const result = await db.query(
      `DELETE FROM ${t} WHERE ctid = ANY(ARRAY(SELECT ctid FROM ${t} WHERE ${old} LIMIT $2))`,
      [cutoff, options.batchSize],
    );
    const deleted = result.rowCount ?? 0;
    total += deleted;
    if (deleted > 0) options.onBatch?.(total);
    if (deleted < options.batchSize) return total;
  }
}
