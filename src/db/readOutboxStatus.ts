import type pg from 'pg';

import { quoteQualified } from './quoteIdentifier.js';

export interface OutboxStatus {
  /** Rows neither processed nor dead-lettered. */
  readonly pending: number;
  /** Age of the oldest pending row (0 when none is pending). */
  readonly oldestPendingAgeSeconds: number;
  /** Rows dead-lettered and not re-delivered. */
  readonly deadLetters: number;
}

/** Counts from the outbox table; both counts use the partial indexes of the migrations. */
export async function readOutboxStatus(
  db: pg.ClientBase | pg.Pool,
  schema: string,
  table: string,
): Promise<OutboxStatus> {
  const t = quoteQualified(schema, table);
  const { rows } = await db.query<{ pending: string; oldest_age: string; dead_letters: string }>(
    `SELECT (SELECT count(*) FROM ${t} WHERE processed_at IS NULL AND dead_lettered_at IS NULL)::text AS pending,
            COALESCE(EXTRACT(EPOCH FROM now() - (
              SELECT created_at FROM ${t} WHERE processed_at IS NULL AND dead_lettered_at IS NULL
               ORDER BY seq LIMIT 1)), 0)::text AS oldest_age,
            (SELECT count(*) FROM ${t} WHERE dead_lettered_at IS NOT NULL AND processed_at IS NULL)::text
              AS dead_letters`,
  );
  const row = rows[0];
  return {
    pending: Number(row?.pending ?? 0),
    oldestPendingAgeSeconds: Math.max(0, Number(row?.oldest_age ?? 0)),
    deadLetters: Number(row?.dead_letters ?? 0),
  };
}
