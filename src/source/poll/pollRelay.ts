import type pg from 'pg';

import type { OutboxRecord, RejectedRecord } from '../../core/outboxRecord.js';
import type { RelayLogger, RelayObserver, Sink, Sleep } from '../../core/ports.js';
import { isTransactionConflict, isTransientConnectionError } from '../../db/sqlState.js';
import { WalboxError, isRetriable, summarizeError, toError } from '../../errors.js';
import type { OutboxRow } from '../../db/outboxRowQuery.js';
import { MAX_BATCH_BYTES, toRecord } from '../../db/outboxRowQuery.js';
import type { OutboxTable } from '../../outbox/outboxColumns.js';
import { buildPollQueries, type PollQueries } from './pollQueries.js';

export interface PollRelayOptions {
  readonly outbox: OutboxTable;
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
 * The classic outbox relay (a polling publisher): claim a batch (FOR UPDATE SKIP LOCKED, heads of aggregates only), publish it in one
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
    this.queries = buildPollQueries(options.outbox);
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
      let full: boolean;
      try {
        full = await this.pollOnce();
        if (failing) {
          failing = false;
          this.deps.observer.recovered?.({ step: 'poll' });
        }
        outageDelay = this.options.retryBackoffInitialMs;
      } catch (error) {
        if (isTransactionConflict(error)) {
          // Another relay or writer won a race (the claim rolled back): poll again, nothing is wrong.
          this.deps.logger.debug({ err: error }, 'poll transaction conflicted with another; polling again');
          continue;
        }
        if (!isTransientConnectionError(error) && !isRetriable(error)) throw error;
        // A broker outage: the claimed rows were rolled back untouched (see deliver); readiness recovers when
        // a later batch is published (pollOnce).
        const brokerAway = isBrokerOutage(error);
        if (!brokerAway) failing = true;
        this.deps.logger.warn(
          { err: summarizeError(error), retryInMs: outageDelay },
          brokerAway
            ? 'publish failed: the broker is unavailable; retrying without spending attempts'
            : 'poll failed; retrying',
        );
        this.deps.observer.retrying?.({
          step: brokerAway ? 'publish to Kafka' : 'poll',
          attempt: 0,
          delayMs: outageDelay,
          error: toError(error),
        });
        await this.deps.sleep(outageDelay, stop).catch(() => undefined);
        outageDelay = Math.min(outageDelay * 2, MAX_OUTAGE_DELAY_MS);
        continue;
      }
      // A full batch means more is waiting: poll again at once.
      if (full) continue;
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

  /** One claim-publish-mark transaction; true when the batch was full (more is likely waiting). */
  private async pollOnce(): Promise<boolean> {
    const client = await this.deps.pool.connect();
    let broken = false;
    try {
      // Explicitly READ COMMITTED: under a default of REPEATABLE READ or SERIALIZABLE, SKIP LOCKED claims fail
      // with 40001 as soon as another relay commits.
      await client.query('BEGIN ISOLATION LEVEL READ COMMITTED');
      const { records, full } = await this.claim(client);
      const delivered = records.length === 0 || (await this.deliver(client, records));
      // Rows waiting for a retry keep a failed publish failing, whatever else goes through (other topics, empty
      // polls): only when none is left waiting (delivered, dead-lettered or re-driven) is it recovered.
      const waiting =
        !delivered ||
        (await client.query<{ waiting: boolean }>(this.queries.anyWaiting)).rows[0]?.waiting === true;
      await client.query('COMMIT');
      if (!waiting) this.deps.observer.recovered?.({ step: 'publish to Kafka' });
      return full;
    } catch (error) {
      broken = isTransientConnectionError(error);
      // A broken connection (or one whose query timed out) is destroyed, which rolls back on the server; a
      // ROLLBACK sent on it could wait forever behind the unanswered query.
      if (!broken) await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    } finally {
      client.release(broken);
    }
  }

  /** The rows to deliver now; `full` when the batch was cut (by count or bytes), so more may be due. */
  private async claim(client: pg.PoolClient): Promise<{ records: OutboxRecord[]; full: boolean }> {
    const { batchSize } = this.options;
    const heads = (
      await client.query<Claimed>(this.queries.claimHeads, [batchSize * WINDOW_FACTOR, batchSize])
    ).rows;
    if (heads.length === 0) return { records: [], full: false };
    const followers = (
      await client.query<Claimed>(this.queries.claimFollowers, [
        heads.map((h) => h.aggregate_type),
        heads.map((h) => h.aggregate_id),
        batchSize,
      ])
    ).rows;
    const chosen = choosePrefix(heads, followers, batchSize);
    const { rows } = await client.query<OutboxRow>(this.queries.selectRows, [chosen, MAX_BATCH_BYTES]);
    return { records: rows.map(toRecord), full: chosen.length >= batchSize || rows.length < chosen.length };
  }

  /** Publishes and marks `records`; false when some of them failed and wait for a retry. */
  private async deliver(client: pg.PoolClient, records: readonly OutboxRecord[]): Promise<boolean> {
    const started = Date.now();
    this.deps.observer.inFlight?.(records.length);
    let rejected: readonly RejectedRecord[];
    try {
      ({ rejected } = await this.deps.sink.publish(records));
    } catch (error) {
      if (!isRetriable(error)) throw error;
      if (!isTopicScoped(error)) {
        // The broker is away (unreachable, timed out, no leader): nothing is wrong with these events, so they
        // spend no attempt (an outage must never dead-letter them). The claim rolls back, the loop backs off.
        this.deps.observer.inFlight?.(0);
        throw error;
      }
      const groups = splitByTopic(records, (r) => this.deps.sink.topicOf(r));
      if (groups.length > 1) {
        // One topic's problem (missing, denied) must not cost the events of other topics their attempts.
        let delivered = true;
        for (const group of groups) delivered = (await this.deliver(client, group)) && delivered;
        return delivered;
      }
      const reason = toError(error).message;
      this.deps.logger.warn(
        { events: records.length, err: summarizeError(error) },
        'publish failed; rows will be retried after their backoff',
      );
      await this.recordFailure(
        client,
        records.map((r) => ({ record: r, reason })),
        error,
      );
      this.deps.observer.publishFailed?.(records);
      this.deps.observer.inFlight?.(0);
      return false;
    }
    const dlqFailed = rejected.length > 0 && !(await this.deadLetter(client, rejected));
    const rejectedIds = new Set(rejected.map((r) => r.record.id));
    const published = records.filter((r) => !rejectedIds.has(r.id));
    this.deps.observer.published?.(published);
    if (published.length > 0) await client.query(this.queries.markProcessed, [published.map((r) => r.id)]);
    this.deps.observer.batchDelivered?.({
      published,
      rejected,
      skipped: 0,
      durationMs: Date.now() - started,
    });
    this.deps.observer.inFlight?.(0);
    return !dlqFailed;
  }

  /** A failed attempt for each row (retried after its backoff; dead-lettered at --max-attempts). */
  private async recordFailure(
    client: pg.PoolClient,
    failures: readonly RejectedRecord[],
    error: unknown,
  ): Promise<void> {
    await client.query(this.queries.recordFailure, [
      failures.map((f) => f.record.id),
      failures.map((f) => f.reason),
      this.options.retryBackoffInitialMs,
      this.options.retryBackoffMaxMs,
      this.options.maxAttempts,
    ]);
    this.deps.observer.retrying?.({
      step: 'publish to Kafka',
      attempt: 0,
      delayMs: 0,
      error: toError(error),
    });
  }

  /**
   * Dead-letters what the broker rejected. When the copy to --dlq-topic fails, the rows are not dead-lettered
   * yet but recorded as a failed attempt (retried after their backoff, dead-lettered at --max-attempts): the
   * batch's published events must still be marked, or every poll would publish them again.
   */
  private async deadLetter(client: pg.PoolClient, rejected: readonly RejectedRecord[]): Promise<boolean> {
    try {
      await this.deps.sink.publishDeadLetters(rejected);
    } catch (error) {
      if (!isRetriable(error)) throw error;
      this.deps.logger.error(
        { events: rejected.map((r) => r.record.id), err: error },
        'events rejected by the broker could not be copied to the dead-letter topic: retried after their backoff',
      );
      const copyFailure = toError(error).message;
      const failures = rejected.map(({ record, reason }) => ({
        record,
        reason: `${reason}; the copy to the dead-letter topic failed: ${copyFailure}`,
      }));
      await this.recordFailure(client, failures, error);
      return false;
    }
    for (const { record, reason } of rejected) {
      this.deps.logger.error(
        { event_id: record.id, event_type: record.eventType, aggregate_id: record.aggregateId, reason },
        'event rejected by the broker: dead-lettered',
      );
    }
    await client.query(this.queries.deadLetter, [
      rejected.map((r) => r.record.id),
      rejected.map((r) => r.reason),
    ]);
    return true;
  }
}

/** The sink could not reach the broker (as opposed to a failure of one topic, or of the database). */
function isBrokerOutage(error: unknown): boolean {
  return error instanceof WalboxError && error.code === 'SINK_UNAVAILABLE' && !isTopicScoped(error);
}

function isTopicScoped(error: unknown): boolean {
  return error instanceof Error && 'topicScoped' in error && error.topicScoped === true;
}

/**
 * Groups records that can be published apart: no aggregate spans two groups (its events stay in one request,
 * in order), and no topic does. Groups keep the records' order.
 */
export function splitByTopic(
  records: readonly OutboxRecord[],
  topicOf: (record: OutboxRecord) => string | undefined,
): OutboxRecord[][] {
  // Union-find over topics and aggregates: an aggregate whose events go to two topics joins them.
  const parent = new Map<string, string>();
  const find = (key: string): string => {
    let root = key;
    for (let next = parent.get(root); next !== undefined && next !== root; next = parent.get(root))
      root = next;
    parent.set(key, root);
    return root;
  };
  const union = (a: string, b: string): void => {
    const ra = find(a);
    const rb = find(b);
    if (ra !== rb) parent.set(ra, rb);
  };
  const keys = records.map((r) => ({
    topic: `t\u0000${topicOf(r) ?? ''}`,
    aggregate: `a\u0000${r.aggregateType}\u0000${r.aggregateId}`,
  }));
  for (const { topic, aggregate } of keys) {
    if (!parent.has(topic)) parent.set(topic, topic);
    if (!parent.has(aggregate)) parent.set(aggregate, aggregate);
    union(aggregate, topic);
  }
  const groups = new Map<string, OutboxRecord[]>();
  records.forEach((record, i) => {
    const root = find(keys[i]?.topic ?? '');
    const group = groups.get(root) ?? [];
    group.push(record);
    groups.set(root, group);
  });
  return [...groups.values()];
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
