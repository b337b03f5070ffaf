import type pg from 'pg';

import type { OutboxRecord } from '../core/outboxRecord.js';
import { MAX_BATCH_BYTES, selectOutboxRowsWithinBytes, toRecord, type OutboxRow } from './outboxRowQuery.js';
import type { OutboxTable } from '../outbox/outboxColumns.js';
import { quoteIdentifier, quoteQualified } from './quoteIdentifier.js';

type Db = pg.ClientBase | pg.Pool;

const DEAD = 'o.dead_lettered_at IS NOT NULL AND o.processed_at IS NULL';

export interface DeadLetter {
  readonly id: string;
  readonly aggregateType: string;
  readonly aggregateId: string;
  readonly eventType: string;
  readonly attempts: number;
  readonly createdAt: string;
  readonly deadLetteredAt: string;
  readonly lastError: string | null;
}

/** Which dead letters a command acts on: the listed ids, or all of them. */
export type DeadLetterSelection = { readonly all: true } | { readonly ids: readonly string[] };

function where(outbox: OutboxTable, selection: DeadLetterSelection): { sql: string; values: unknown[] } {
  return 'all' in selection
    ? { sql: DEAD, values: [] }
    : { sql: `${DEAD} AND ${idOf(outbox)} = ANY($1::uuid[])`, values: [selection.ids] };
}

/** The event id column of alias `o`. */
function idOf(outbox: OutboxTable): string {
  return `o.${quoteIdentifier(outbox.columns.id)}`;
}

/** The oldest dead letters first (what the dead-letters view shows), without payloads. */
export async function listDeadLetters(db: Db, outbox: OutboxTable, limit: number): Promise<DeadLetter[]> {
  const { rows } = await db.query<{
    id: string;
    aggregate_type: string;
    aggregate_id: string;
    event_type: string;
    attempts: number;
    created_at: string;
    dead_lettered_at: string;
    last_error: string | null;
  }>(
    `SELECT ${idOf(outbox)}::text AS id, o.${quoteIdentifier(outbox.columns.aggregateType)}::text AS aggregate_type,
            o.${quoteIdentifier(outbox.columns.aggregateId)}::text AS aggregate_id,
            o.${quoteIdentifier(outbox.columns.eventType)}::text AS event_type, o.attempts,
            to_char(o.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') AS created_at,
            to_char(o.dead_lettered_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') AS dead_lettered_at,
            o.last_error
       FROM ${quoteQualified(outbox.schema, outbox.table)} AS o
      WHERE ${DEAD}
      ORDER BY o.seq
      LIMIT $1`,
    [limit],
  );
  return rows.map((r) => ({
    id: r.id,
    aggregateType: r.aggregate_type,
    aggregateId: r.aggregate_id,
    eventType: r.event_type,
    attempts: r.attempts,
    createdAt: r.created_at,
    deadLetteredAt: r.dead_lettered_at,
    lastError: r.last_error,
  }));
}

/**
 * Dead-lettered rows as records, in seq order, locked until the transaction ends (two retries never race); at
 * most `limit` rows and MAX_BATCH_BYTES of payload (the first row always), leaving out the ids in `exclude`.
 */
export async function lockDeadLetters(
  client: pg.ClientBase,
  outbox: OutboxTable,
  selection: DeadLetterSelection,
  limit: number,
  exclude: readonly string[] = [],
): Promise<OutboxRecord[]> {
  const selected = where(outbox, selection);
  const values = [...selected.values, exclude];
  const sql = `${selected.sql} AND NOT (${idOf(outbox)} = ANY($${String(values.length)}::uuid[]))`;
  const { rows } = await client.query<OutboxRow>(
    selectOutboxRowsWithinBytes(outbox, {
      where: sql,
      limit: String(limit),
      maxBytes: String(MAX_BATCH_BYTES),
      forUpdate: true,
    }),
    values,
  );
  return rows.map(toRecord);
}

/** Re-delivered dead letters become processed rows (the dead-letter mark stays as history). */
export async function markRedelivered(db: Db, outbox: OutboxTable, ids: readonly string[]): Promise<void> {
  await db.query(
    `UPDATE ${quoteQualified(outbox.schema, outbox.table)} AS o SET processed_at = now(), last_error = NULL WHERE ${idOf(outbox)} = ANY($1::uuid[])`,
    [ids],
  );
}

export async function recordRedeliveryFailure(
  db: Db,
  outbox: OutboxTable,
  ids: readonly string[],
  reason: string,
): Promise<void> {
  await db.query(
    `UPDATE ${quoteQualified(outbox.schema, outbox.table)} AS o SET last_error = $2, attempts = o.attempts + 1 WHERE ${idOf(outbox)} = ANY($1::uuid[])`,
    [ids, reason],
  );
}

/** Deletes dead letters; returns the ids deleted. */
export async function purgeDeadLetters(
  db: Db,
  outbox: OutboxTable,
  selection: DeadLetterSelection,
): Promise<string[]> {
  const { sql, values } = where(outbox, selection);
  const { rows } = await db.query<{ id: string }>(
    `DELETE FROM ${quoteQualified(outbox.schema, outbox.table)} AS o WHERE ${sql} RETURNING ${idOf(outbox)}::text AS id`,
    values,
  );
  return rows.map((r) => r.id);
}

/** Why a row was dead-lettered by `walbox dlq skip`. */
export const SKIPPED_BY_OPERATOR = 'skipped by an operator (walbox dlq skip)';

/**
 * Dead-letters pending rows by hand: the way out when one event cannot be published (its topic is missing or
 * denied) and holds up the stream. A relay retrying it sees the row dead-lettered and goes on; `dlq retry`
 * re-delivers it once the topic is fixed. Returns the ids skipped.
 */
export async function skipPendingRows(
  db: Db,
  outbox: OutboxTable,
  ids: readonly string[],
): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>(
    `UPDATE ${quoteQualified(outbox.schema, outbox.table)} AS o
        SET dead_lettered_at = now(), last_error = $2
      WHERE ${idOf(outbox)} = ANY($1::uuid[]) AND o.processed_at IS NULL AND o.dead_lettered_at IS NULL
      RETURNING ${idOf(outbox)}::text AS id`,
    [ids, SKIPPED_BY_OPERATOR],
  );
  return rows.map((r) => r.id);
}
