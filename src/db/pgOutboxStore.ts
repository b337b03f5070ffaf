import type pg from 'pg';

import type { OutboxStore } from '../core/ports.js';
import type { RejectedRecord } from '../core/outboxRecord.js';
import { DatabaseError } from '../errors.js';
import { quoteQualified } from './quoteIdentifier.js';
import { isTransientConnectionError } from './sqlState.js';

/** last_error is for people; a runaway broker message must not bloat the row. */
const MAX_ERROR_LENGTH = 2_000;

/** The outbox rows as delivery sees them, over a pool (which reconnects by itself after an outage). */
export class PgOutboxStore implements OutboxStore {
  private readonly table: string;

  constructor(
    private readonly pool: pg.Pool,
    names: { readonly schema: string; readonly table: string },
  ) {
    this.table = quoteQualified(names.schema, names.table);
  }

  async findFinished(ids: readonly string[]): Promise<ReadonlySet<string>> {
    if (ids.length === 0) return new Set();
    const { rows } = await this.query<{ id: string }>(
      'check processed rows',
      `SELECT id::text AS id FROM ${this.table}
        WHERE id = ANY($1::uuid[]) AND (processed_at IS NOT NULL OR dead_lettered_at IS NOT NULL)`,
      [ids],
    );
    return new Set(rows.map((r) => r.id));
  }

  async markProcessed(ids: readonly string[]): Promise<void> {
    if (ids.length === 0) return;
    await this.query(
      'mark rows processed',
      `UPDATE ${this.table} SET processed_at = now() WHERE id = ANY($1::uuid[]) AND processed_at IS NULL`,
      [ids],
    );
  }

  async markDeadLettered(rejected: readonly RejectedRecord[]): Promise<void> {
    if (rejected.length === 0) return;
    await this.query(
      'mark rows dead-lettered',
      `UPDATE ${this.table} AS o
          SET dead_lettered_at = now(), last_error = r.reason, attempts = o.attempts + 1
         FROM unnest($1::uuid[], $2::text[]) AS r(id, reason)
        WHERE o.id = r.id AND o.processed_at IS NULL AND o.dead_lettered_at IS NULL`,
      [rejected.map((r) => r.record.id), rejected.map((r) => r.reason.slice(0, MAX_ERROR_LENGTH))],
    );
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
