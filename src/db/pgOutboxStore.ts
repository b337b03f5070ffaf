import type pg from 'pg';

import type { OutboxRecord, RejectedRecord } from '../core/outboxRecord.js';
import type { OutboxStore } from '../core/ports.js';
import { DatabaseError } from '../errors.js';
import type { OutboxTable } from '../outbox/outboxColumns.js';
import { quoteIdentifier, quoteQualified } from './quoteIdentifier.js';
import { isTransientConnectionError } from './sqlState.js';

/** last_error is for people; a runaway broker message must not bloat the row. */
const MAX_ERROR_LENGTH = 2_000;
/** A commit is visible within moments of reaching the WAL; this only bounds a pathological wait. */
const VISIBILITY_TIMEOUT_MS = 30_000;

/**
 * True while any of the transactions is still running for a new snapshot (listed in its xip, or at or above its
 * xmax), comparing 32-bit xids modulo 2^32.
 */
const ANY_IN_PROGRESS = `
  WITH snap AS (SELECT pg_current_snapshot() AS s)
  SELECT EXISTS (
    SELECT 1 FROM unnest($1::bigint[]) AS t(xid), snap
     WHERE t.xid IN (SELECT x::text::bigint % 4294967296 FROM pg_snapshot_xip(snap.s) AS x)
        OR (t.xid - pg_snapshot_xmax(snap.s)::text::bigint % 4294967296 + 4294967296) % 4294967296 < 2147483648
  ) AS in_progress`;

/** The outbox rows as delivery sees them, over a pool (which reconnects by itself after an outage). */
export class PgOutboxStore implements OutboxStore {
  private readonly table: string;
  /** The event id column, quoted. */
  private readonly id: string;

  constructor(
    private readonly pool: pg.Pool,
    outbox: OutboxTable,
  ) {
    this.table = quoteQualified(outbox.schema, outbox.table);
    this.id = quoteIdentifier(outbox.columns.id);
  }

  async findFinished(ids: readonly string[]): Promise<ReadonlySet<string>> {
    if (ids.length === 0) return new Set();
    const { rows } = await this.query<{ id: string }>(
      'check processed rows',
      `SELECT ${this.id}::text AS id FROM ${this.table}
        WHERE ${this.id} = ANY($1::uuid[]) AND (processed_at IS NOT NULL OR dead_lettered_at IS NOT NULL)`,
      [ids],
    );
    return new Set(rows.map((r) => r.id));
  }

  async markProcessed(records: readonly OutboxRecord[]): Promise<void> {
    await this.markVisible(records, (ids) =>
      this.query<{ id: string }>(
        'mark rows processed',
        `UPDATE ${this.table} SET processed_at = now()
          WHERE ${this.id} = ANY($1::uuid[]) AND processed_at IS NULL
          RETURNING ${this.id}::text AS id`,
        [ids],
      ),
    );
  }

  async markDeadLettered(rejected: readonly RejectedRecord[]): Promise<void> {
    const reasons = new Map(rejected.map((r) => [r.record.id, r.reason.slice(0, MAX_ERROR_LENGTH)]));
    await this.markVisible(
      rejected.map((r) => r.record),
      (ids) =>
        this.query<{ id: string }>(
          'mark rows dead-lettered',
          `UPDATE ${this.table} AS o
              SET dead_lettered_at = now(), last_error = r.reason, attempts = o.attempts + 1
             FROM unnest($1::uuid[], $2::text[]) AS r(id, reason)
            WHERE o.${this.id} = r.id AND o.processed_at IS NULL AND o.dead_lettered_at IS NULL
            RETURNING o.${this.id}::text AS id`,
          [ids, ids.map((id) => reasons.get(id) ?? '')],
        ),
    );
  }

  /**
   * Runs `update` for the records' rows. pgoutput can deliver a commit a moment before the transaction is visible
   * to other sessions; an UPDATE then silently misses the row. So when rows are missed and their transactions
   * are still in progress for a new snapshot, wait and update those again. Rows missed once their transaction is
   * visible were deleted (or already marked elsewhere): nothing left to mark.
   */
  private async markVisible(
    records: readonly OutboxRecord[],
    update: (ids: string[]) => Promise<pg.QueryResult<{ id: string }>>,
  ): Promise<void> {
    let pending = records;
    const deadline = Date.now() + VISIBILITY_TIMEOUT_MS;
    for (let delay = 1; ; delay = Math.min(delay * 2, 50)) {
      const { rows } = await update(pending.map((r) => r.id));
      const marked = new Set(rows.map((r) => r.id));
      pending = pending.filter((r) => !marked.has(r.id) && r.xid !== undefined);
      if (pending.length === 0) return;
      if (!(await this.anyInProgress(pending)) || Date.now() > deadline) {
        // Visible now (possibly since the update just above): one last update catches a row that just appeared.
        await update(pending.map((r) => r.id));
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
  }

  private async anyInProgress(records: readonly OutboxRecord[]): Promise<boolean> {
    const xids = [...new Set(records.map((r) => r.xid))];
    const { rows } = await this.query<{ in_progress: boolean }>(
      'check transaction visibility',
      ANY_IN_PROGRESS,
      [xids],
    );
    return rows[0]?.in_progress === true;
  }

  private async query<R extends pg.QueryResultRow>(
    what: string,
    text: string,
    values: unknown[],
  ): Promise<pg.QueryResult<R>> {
    try {
      return await this.pool.query<R>(text, values);
    } catch (cause) {
      const retriable = isTransientConnectionError(cause);
      throw new DatabaseError(
        retriable ? 'DATABASE_UNAVAILABLE' : 'DATABASE_FAILED',
        `${what} in ${this.table}: ${(cause as Error).message}`,
        { cause, retriable },
      );
    }
  }
}
