import pg from 'pg';

import { enqueue } from '../../src/outbox/enqueue.js';
import { requireDatabaseUrl } from './testEnv.js';

export interface WrittenEvent {
  readonly id: string;
  readonly aggregateId: string;
  /** The aggregate's version: committed events of one aggregate have strictly increasing versions. */
  readonly version: number;
}

export interface WriterLoadOptions {
  readonly schema: string;
  readonly table?: string;
  readonly aggregateType: string;
  readonly writers: number;
  readonly events: number;
  readonly aggregates: number;
  /** Share of transactions rolled back at the end. */
  readonly rollbackRatio?: number;
  /** Share of events preceded by one written and rolled back to a savepoint in the same transaction. */
  readonly savepointRollbackRatio?: number;
  /** Pause between a writer's transactions, to spread the load over time. */
  readonly pauseMs?: number;
  /**
   * Keep writing through PostgreSQL restarts: reconnect, and settle a transaction whose COMMIT got no answer by
   * looking its events up, so `committed` stays exact.
   */
  readonly survivesOutages?: boolean;
  /** The database the writers connect to (default: the stack's). */
  readonly databaseUrl?: string;
  /** Called after each commit with the number of committed events so far. */
  readonly onCommit?: (committed: number) => void;
  /** Keep writing past `events` until this says so (a fault whose timing the test does not control). */
  readonly until?: () => boolean;
}

export interface WriterLoadResult {
  readonly committed: WrittenEvent[];
  readonly rolledBack: string[];
}

/** A writer's connection; with `retry`, waits (up to a minute) for a restarting server. */
async function connectWriter(url: string, retry: boolean): Promise<pg.Client> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const client = new pg.Client({ connectionString: url });
    client.on('error', () => undefined);
    try {
      await client.connect();
      return client;
    } catch (error) {
      await client.end().catch(() => undefined);
      if (!retry || Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
}

/**
 * Writes outbox events the way services do: each transaction locks its aggregates' rows (in a fixed order, so
 * writers never deadlock), bumps their versions and enqueues 1–5 events; some transactions roll back. The
 * payload carries the aggregate's version, so a checker can verify per-aggregate order.
 */
export async function writeLoad(options: WriterLoadOptions): Promise<WriterLoadResult> {
  const aggregates = `${pg.escapeIdentifier(options.schema)}.test_aggregates`;
  const url = options.databaseUrl ?? requireDatabaseUrl();
  const setup = new pg.Client({ connectionString: url });
  await setup.connect();
  await setup.query(`CREATE TABLE IF NOT EXISTS ${aggregates} (id text PRIMARY KEY, version int NOT NULL)`);
  await setup.query(
    `INSERT INTO ${aggregates} SELECT 'agg-' || g, 0 FROM generate_series(1, $1) g ON CONFLICT DO NOTHING`,
    [options.aggregates],
  );
  await setup.end();

  const committed: WrittenEvent[] = [];
  const rolledBack: string[] = [];
  let remaining = options.events;
  const writer = async (): Promise<void> => {
    let client = await connectWriter(url, options.survivesOutages === true);
    try {
      const more = (): boolean => remaining > 0 || (options.until !== undefined && !options.until());
      while (more()) {
        const size = 1 + Math.floor(Math.random() * 5);
        const count = remaining > 0 ? Math.min(remaining, size) : size;
        remaining = Math.max(0, remaining - count);
        const rollback = Math.random() < (options.rollbackRatio ?? 0.1);
        const chosen = [
          ...new Set(
            Array.from(
              { length: Math.min(count, 3) },
              () => 1 + Math.floor(Math.random() * options.aggregates),
            ),
          ),
        ]
          .sort((a, b) => a - b)
          .map((n) => `agg-${n}`);
        const events: WrittenEvent[] = [];
        let committing = false;
        try {
          await client.query('BEGIN');
          for (let i = 0; i < count; i++) {
            const aggregateId = chosen[i % chosen.length] ?? 'agg-1';
            if (Math.random() < (options.savepointRollbackRatio ?? 0)) {
              // An event written and undone inside the transaction: it must never reach Kafka.
              await client.query('SAVEPOINT undone');
              await client.query(`UPDATE ${aggregates} SET version = version + 1 WHERE id = $1`, [
                aggregateId,
              ]);
              const undone = await enqueue(
                client,
                {
                  aggregateType: options.aggregateType,
                  aggregateId,
                  eventType: 'test.undone',
                  payloadJson: '{}',
                },
                { schema: options.schema, table: options.table ?? 'outbox_events' },
              );
              await client.query('ROLLBACK TO SAVEPOINT undone');
              rolledBack.push(undone.id);
            }
            const { rows } = await client.query<{ version: number }>(
              `UPDATE ${aggregates} SET version = version + 1 WHERE id = $1 RETURNING version`,
              [aggregateId],
            );
            const version = rows[0]?.version ?? -1;
            const { id } = await enqueue(
              client,
              {
                aggregateType: options.aggregateType,
                aggregateId,
                eventType: 'test.event',
                payloadJson: `{"aggregate": "${aggregateId}", "version": ${version}}`,
              },
              { schema: options.schema, table: options.table ?? 'outbox_events' },
            );
            events.push({ id, aggregateId, version });
          }
          if (rollback) {
            await client.query('ROLLBACK');
            rolledBack.push(...events.map((e) => e.id));
            remaining += count;
          } else {
            committing = true;
            await client.query('COMMIT');
            committed.push(...events);
            options.onCommit?.(committed.length);
          }
        } catch (error) {
          await client.query('ROLLBACK').catch(() => undefined);
          if (options.survivesOutages !== true) throw error;
          await client.end().catch(() => undefined);
          client = await connectWriter(url, true);
          const ids = events.map((e) => e.id);
          const { rows } = committing
            ? await client.query<{ n: string }>(
                `SELECT count(*) AS n FROM ${pg.escapeIdentifier(options.schema)}.${pg.escapeIdentifier(options.table ?? 'outbox_events')} WHERE id = ANY($1::uuid[])`,
                [ids],
              )
            : { rows: [{ n: '0' }] };
          if (Number(rows[0]?.n) === ids.length && ids.length > 0) committed.push(...events);
          else remaining += count;
        }
        if (options.pauseMs !== undefined)
          await new Promise((resolve) => setTimeout(resolve, options.pauseMs));
      }
    } finally {
      await client.end();
    }
  };
  await Promise.all(Array.from({ length: options.writers }, writer));
  return { committed, rolledBack };
}

/** The common small load of the e2e tests: 2 writers, "order" events, no rollbacks. */
export function writeOrders(schema: string, events: number, aggregates: number): Promise<WriterLoadResult> {
  return writeLoad({ schema, aggregateType: 'order', writers: 2, events, aggregates, rollbackRatio: 0 });
}
