import { quoteIdentifier, quoteQualified } from '../../db/quoteIdentifier.js';
import { selectOutboxRowsWithinBytes } from '../../db/outboxRowQuery.js';
import type { OutboxTable } from '../../outbox/outboxColumns.js';

/** SQL of the poll relay for one outbox table; every value is a bound parameter. */
export interface PollQueries {
  /** $1 window, $2 limit: lock the heads (earliest pending row) of aggregates that may go now. */
  readonly claimHeads: string;
  /** $1 aggregate types, $2 aggregate ids, $3 limit: lock the first pending rows of those aggregates. */
  readonly claimFollowers: string;
  /** $1 ids, $2 max bytes: the full rows, in seq order, cut where their payloads pass $2. */
  readonly selectRows: string;
  /** $1 ids. */
  readonly markProcessed: string;
  /** Whether any pending row waits for a retry (a failed publish not yet recovered). */
  readonly anyWaiting: string;
  /** $1 ids, $2 errors (one per id), $3 initial backoff ms, $4 max backoff ms, $5 max attempts. */
  readonly recordFailure: string;
  /** $1 ids, $2 errors. */
  readonly deadLetter: string;
}

/**
 * Ordering across several relays: only the head of an aggregate (its earliest pending row by seq) can be claimed,
 * with FOR UPDATE SKIP LOCKED; the rows after a claimed head are then locked by the same relay. An aggregate whose
 * head is in flight elsewhere (locked) or waiting for a retry (retry_after in the future) is not taken at all, so
 * none of its later events can overtake. Candidates are the first `window` pending rows by seq of aggregates with
 * no row waiting for a retry (a blocked hot aggregate would otherwise fill the window): if any row of an aggregate
 * is among them, so is its head.
 */
export function buildPollQueries(outbox: OutboxTable): PollQueries {
  const t = quoteQualified(outbox.schema, outbox.table);
  const pending = 'o.processed_at IS NULL AND o.dead_lettered_at IS NULL';
  // The configured columns, under walbox's names inside the queries (and in the rows they return).
  const id = quoteIdentifier(outbox.columns.id);
  const type = quoteIdentifier(outbox.columns.aggregateType);
  const key = quoteIdentifier(outbox.columns.aggregateId);
  return {
    claimHeads: `
      WITH waiting AS (
        SELECT DISTINCT o.${type} AS aggregate_type, o.${key} AS aggregate_id FROM ${t} AS o
         WHERE ${pending} AND o.retry_after > now()
      ), candidates AS (
        SELECT o.${id} AS id, o.${type} AS aggregate_type, o.${key} AS aggregate_id, o.seq FROM ${t} AS o
         WHERE ${pending}
           AND NOT EXISTS (
             SELECT 1 FROM waiting w WHERE w.aggregate_type = o.${type} AND w.aggregate_id = o.${key})
         ORDER BY o.seq
         LIMIT $1
      ), heads AS (
        SELECT DISTINCT ON (aggregate_type, aggregate_id) id, seq
          FROM candidates
         ORDER BY aggregate_type, aggregate_id, seq
      )
      SELECT o.${id}::text AS id, o.${type}::text AS aggregate_type, o.${key}::text AS aggregate_id,
             o.seq::text AS seq
        FROM ${t} AS o JOIN heads h ON h.id = o.${id}
       WHERE ${pending} AND (o.retry_after IS NULL OR o.retry_after <= now())
       ORDER BY o.seq
       LIMIT $2
         FOR UPDATE OF o SKIP LOCKED`,
    claimFollowers: `
      SELECT o.${id}::text AS id, o.${type}::text AS aggregate_type, o.${key}::text AS aggregate_id,
             o.seq::text AS seq, (o.retry_after IS NULL OR o.retry_after <= now()) AS eligible
        FROM ${t} AS o
        JOIN unnest($1::text[], $2::text[]) AS a(aggregate_type, aggregate_id)
          ON a.aggregate_type = o.${type}::text AND a.aggregate_id = o.${key}::text
       WHERE ${pending}
       ORDER BY o.seq
       LIMIT $3
         FOR UPDATE OF o`,
    selectRows: selectOutboxRowsWithinBytes(outbox, {
      where: `o.${id} = ANY($1::uuid[])`,
      limit: 'cardinality($1::uuid[])',
      maxBytes: '$2',
    }),
    anyWaiting: `SELECT EXISTS (SELECT 1 FROM ${t} AS o WHERE ${pending} AND o.retry_after > now()) AS waiting`,
    markProcessed: `UPDATE ${t} SET processed_at = now() WHERE ${id} = ANY($1::uuid[])`,
    recordFailure: `
      UPDATE ${t} AS o
         SET attempts = o.attempts + 1,
             last_error = r.reason,
             retry_after = now() + make_interval(secs => least($4::float8, $3::float8 * power(2, o.attempts)) / 1000),
             dead_lettered_at = CASE WHEN o.attempts + 1 >= $5 THEN now() END
        FROM unnest($1::uuid[], $2::text[]) AS r(id, reason)
       WHERE o.${id} = r.id`,
    deadLetter: `
      UPDATE ${t} AS o
         SET dead_lettered_at = now(), last_error = r.reason, attempts = o.attempts + 1
        FROM unnest($1::uuid[], $2::text[]) AS r(id, reason)
       WHERE o.${id} = r.id`,
  };
}
