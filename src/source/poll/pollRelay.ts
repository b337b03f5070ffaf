import type pg from 'pg';

import type { OutboxRecord, RejectedRecord } from '../../core/outboxRecord.js';
import type { RelayLogger, RelayObserver, Sink, Sleep } from '../../core/ports.js';
import { isTransientConnectionError } from '../../db/sqlState.js';
import { isRetriable, toError } from '../../errors.js';
import type { OutboxRow } from '../../db/outboxRowQuery.js';
import { toRecord } from '../../db/outboxRowQuery.js';
import { buildPollQueries, type PollQueries } from './pollQueries.js';

export interface PollRelayOptions {
  readonly schema: string;
  readonly table: string;
  readonly batchSize: number;
  readonly pollIntervalMs: number;
  readonly maxAttempts: number;
  readonly retryBackoffInitialMs: number;
  readonly retryBackoffMaxMs: number;
}

export interface PollRelayDeps {
  readonly pool: pg.Pool;
  readonly sink: Sink;
  readonly logger: RelayLogger;
  readonly observer: RelayObserver;
  readonly sleep: Sleep;
}

/** Candidate rows per poll, as a multiple of the batch size: room for aggregates with several pending events. */
const WINDOW_FACTOR = 4;
/** Backoff of the poll loop itself while PostgreSQL cannot be reached. */
const MAX_OUTAGE_DELAY_MS = 30_000;

interface Claimed {
  readonly id: string;
  readonly aggregate_type: string;
  readonly aggregate_id: string;
  readonly seq: string;
  readonly eligible?: boolean;
}

/**
 * The design article's relay: claim a batch (FOR UPDATE SKIP LOCKED, heads of aggregates only), publish it in one
 * request, mark it in one UPDATE, commit. A failed publish bumps attempts and sets retry_after (exponential
 * backoff) and last_error; at --max-attempts, or at once for a record the broker rejects, the row is
 * dead-lettered. Several relays may run at once.
 */
export class PollRelay {
  private readonly queries: PollQueries;
  private wake: (() => void) | undefined;

  constructor(
    private readonly deps: PollRelayDeps,
    private readonly options: PollRelayOptions,
  ) {
    this.queries = buildPollQueries(options.schema, options.table);
  }

  /** Wakes the loop now (NOTIFY arrived). */
  notify(): void {
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }

  /** Polls until `stop` aborts; a batch in progress is finished first. */
  async run(stop: AbortSignal): Promise<void> {
    let outageDelay = this.options.retryBackoffInitialMs;
    let failing = false;
    while (!stop.aborted) {
      let claimed: number;
      try {
        claimed = await this.pollOnce();
        if (failing) {
          failing = false;
          this.deps.observer.recovered?.({ step: 'poll' });
        }
        outageDelay = this.options.retryBackoffInitialMs;
      } catch (error) {
        if (!isTransientConnectionError(error) && !isRetriable(error)) throw error;
        failing = true;
        this.deps.logger.warn({ err: error, retryInMs: outageDelay }, 'poll failed; retrying');
        this.deps.observer.retrying?.({
          step: 'poll',
          attempt: 0,
          delayMs: outageDelay,
          error: toError(error),
        });
        await this.deps.sleep(outageDelay, stop).catch(() => undefined);
        outageDelay = Math.min(outageDelay * 2, MAX_OUTAGE_DELAY_MS);
        continue;
      }
      // A full batch means more is waiting: poll again at once.
      if (claimed >= this.options.batchSize) continue;
      await this.waitForWork(stop);
    }
  }

  private waitForWork(stop: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        stop.removeEventListener('abort', done);
        this.wake = undefined;
        resolve();
      };
      const timer = setTimeout(done, this.options.pollIntervalMs);
      stop.addEventListener('abort', done, { once: true });
      this.wake = done;
    });
  }

  /** One claim-publish-mark transaction; returns how many rows it claimed. */
  private async pollOnce(): Promise<number> {
    const client = await this.deps.pool.connect();
    let broken = false;
    try {
      await client.query('BEGIN');
      const records = await this.claim(client);
      if (records.length === 0) {
        await client.query('COMMIT');
        // Nothing is due: rows that failed wait for their backoff, and the broker probe reports an outage.
        this.deps.observer.recovered?.({ step: 'publish to Kafka' });
        return 0;
      }
      await this.deliver(client, records);
      await client.query('COMMIT');
      return records.length;
    } catch (error) {
      broken = isTransientConnectionError(error);
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    } finally {
      client.release(broken);
    }
  }

  private async claim(client: pg.PoolClient): Promise<OutboxRecord[]> {
    const { batchSize } = this.options;
    const heads = (
      await client.query<Claimed>(this.queries.claimHeads, [batchSize * WINDOW_FACTOR, batchSize])
    ).rows;
    if (heads.length === 0) return [];
    const followers = (
      await client.query<Claimed>(this.queries.claimFollowers, [
        heads.map((h) => h.aggregate_type),
        heads.map((h) => h.aggregate_id),
        batchSize,
      ])
    ).rows;
    const chosen = choosePrefix(heads, followers, batchSize);
    const { rows } = await client.query<OutboxRow>(this.queries.selectRows, [chosen]);
    return rows.map(toRecord);
  }

  private async deliver(client: pg.PoolClient, records: readonly OutboxRecord[]): Promise<void> {
    const started = Date.now();
    this.deps.observer.inFlight?.(records.length);
    let rejected: readonly RejectedRecord[];
    try {
      ({ rejected } = await this.deps.sink.publish(records));
    } catch (error) {
      if (!isRetriable(error)) throw error;
      const reason = toError(error).message;
      await client.query(this.queries.recordFailure, [
        records.map((r) => r.id),
        reason,
        this.options.retryBackoffInitialMs,
        this.options.retryBackoffMaxMs,
        this.options.maxAttempts,
      ]);
      this.deps.logger.warn(
        { events: records.length, err: error },
        'publish failed; rows will be retried after their backoff',
      );
      this.deps.observer.publishFailed?.(records);
      this.deps.observer.inFlight?.(0);
      this.deps.observer.retrying?.({
        step: 'publish to Kafka',
        attempt: 0,
        delayMs: 0,
        error: toError(error),
      });
      return;
    }
    if (rejected.length > 0) {
      for (const { record, reason } of rejected) {
        this.deps.logger.error(
          { event_id: record.id, event_type: record.eventType, aggregate_id: record.aggregateId, reason },
          'event rejected by the broker: dead-lettered',
        );
      }
      await this.deps.sink.publishDeadLetters(rejected);
      await client.query(this.queries.deadLetter, [
        rejected.map((r) => r.record.id),
        rejected.map((r) => r.reason),
      ]);
    }
    const rejectedIds = new Set(rejected.map((r) => r.record.id));
    const published = records.filter((r) => !rejectedIds.has(r.id));
    this.deps.observer.published?.(published);
    if (published.length > 0) await client.query(this.queries.markProcessed, [published.map((r) => r.id)]);
    this.deps.observer.recovered?.({ step: 'publish to Kafka' });
    this.deps.observer.batchDelivered?.({
      published,
      rejected,
      skipped: 0,
      durationMs: Date.now() - started,
    });
    this.deps.observer.inFlight?.(0);
  }
}

/**
 * The ids to deliver: claimed heads plus, per aggregate, its following rows while they may go now, cut to the
 * batch size in seq order (a cut in seq order keeps every aggregate's events a prefix).
 */
function choosePrefix(heads: readonly Claimed[], followers: readonly Claimed[], batchSize: number): string[] {
  const headIds = new Set(heads.map((h) => h.id));
  const blocked = new Set<string>();
  const chosen: { id: string; seq: bigint }[] = heads.map((h) => ({ id: h.id, seq: BigInt(h.seq) }));
  for (const row of followers) {
    if (headIds.has(row.id)) continue;
    const aggregate = `${row.aggregate_type}\u0000${row.aggregate_id}`;
    if (blocked.has(aggregate)) continue;
    if (row.eligible !== true) {
      blocked.add(aggregate);
      continue;
    }
    chosen.push({ id: row.id, seq: BigInt(row.seq) });
  }
  return chosen
    .sort((a, b) => (a.seq < b.seq ? -1 : a.seq > b.seq ? 1 : 0))
    .slice(0, batchSize)
    .map((c) => c.id);
}
