import { AckTracker } from './ackTracker.js';
import { findUndelivered, markDelivered, publishRecords, type DeliveryDeps } from './deliverBatch.js';
import type { Lsn } from './lsn.js';
import { countRecordBytes, MAX_BATCH_BYTES } from './maxBatchBytes.js';
import type { OutboxRecord } from './outboxRecord.js';
import type { ChangeStream, OutboxStore, RelayLogger, RelayObserver, Sink, Sleep } from './ports.js';
import type { RetryPolicy } from './retryUntilDone.js';
import { untilAborted } from './untilAborted.js';

export interface StreamRelayOptions {
  readonly batchSize: number;
  readonly retry: RetryPolicy;
  /** The slot's confirmed_flush_lsn when streaming started: never confirm below it. */
  readonly startLsn: Lsn;
  /**
   * The server's WAL position once the catch-up was done and the slot was ours (or undefined: check every row).
   * Rows of transactions committed after it were never visible to a catch-up, an earlier run, a relay that held
   * the slot before or a poll relay stopped before, so only this relay can deliver them: they skip the
   * already-delivered check, one query per batch.
   */
  readonly freshAfterLsn?: Lsn;
}

export interface StreamRelayDeps {
  readonly stream: ChangeStream;
  readonly sink: Sink;
  readonly store: OutboxStore;
  readonly logger: RelayLogger;
  readonly sleep: Sleep;
  readonly observer?: RelayObserver;
}

interface BatchEntry {
  readonly record: OutboxRecord;
  readonly transaction: number;
  /** Committed after freshAfterLsn: no one else can have delivered it. */
  readonly fresh: boolean;
}

/**
 * Batches in the pipeline at once. Checking batch N+2, publishing N+1 and marking N overlap; each step still
 * runs one batch at a time, in order. Batch N+2 is published only once N is marked, so at most two batches are
 * ever published and not yet marked: that is the in-flight window a crash can duplicate (guarantee G4).
 */
const MAX_BATCHES_IN_FLIGHT = 3;

/**
 * WAL mode's pipeline: stream items in commit order → batches → sink → mark → confirm. One batch is in flight
 * at a time, so per-aggregate order is the stream's order. Events may be published before their Commit
 * arrives (only committed transactions are streamed); a transaction's end LSN is confirmed once all its events
 * are delivered and marked, and never before the transactions ahead of it.
 */
export class StreamRelay {
  private readonly tracker: AckTracker;
  private readonly batch: BatchEntry[] = [];
  private batchBytes = 0;
  private lastConfirmed: Lsn;
  /** The transaction between its Begin and Commit; fresh: committed after freshAfterLsn. */
  private openTransaction: { readonly id: number; readonly fresh: boolean } | undefined;
  /** Completion of each batch still in the pipeline, oldest first. */
  private readonly inFlight: Promise<void>[] = [];
  private publishing: Promise<unknown> = Promise.resolve();
  private marking: Promise<unknown> = Promise.resolve();
  /** The marking of the batch before the last one: the next batch is published only after it. */
  private markingBeforeLast: Promise<unknown> = Promise.resolve();
  private failure: { error: unknown } | undefined;
  /** Aborts when a batch fails: the loop must not wait for the next stream item to notice. */
  private readonly failed = new AbortController();

  constructor(
    private readonly deps: StreamRelayDeps,
    private readonly options: StreamRelayOptions,
  ) {
    this.tracker = new AckTracker(options.startLsn);
    this.lastConfirmed = options.startLsn;
  }

  /**
   * Runs until the stream ends (after stopReceiving(), once the buffered items are delivered), then confirms
   * the final position. Aborting `signal` gives up on pending retries: nothing more is confirmed.
   */
  async run(signal: AbortSignal): Promise<void> {
    try {
      await this.consume(signal);
    } finally {
      // Whatever ends the run, let the batches already sent finish marking: a restart then skips them.
      await Promise.allSettled(this.inFlight);
    }
    this.throwIfFailed();
    this.confirmIfAdvanced();
  }

  private async consume(signal: AbortSignal): Promise<void> {
    const { stream } = this.deps;
    for (;;) {
      this.throwIfFailed();
      // On a quiet stream the next item can be seconds away (or never come): a failed batch ends the wait.
      const item = await (stream.buffered() > 0
        ? stream.next()
        : untilAborted(stream.next(), this.failed.signal));
      if (item === undefined) break;
      switch (item.kind) {
        case 'begin':
          this.openTransaction = {
            id: this.tracker.begin(),
            fresh: this.options.freshAfterLsn !== undefined && item.commitLsn > this.options.freshAfterLsn,
          };
          break;
        case 'record': {
          const { id: transaction, fresh } = this.requireOpenTransaction();
          this.tracker.addEvent(transaction);
          this.batch.push({ record: item.record, transaction, fresh });
          this.batchBytes += countRecordBytes(item.record);
          if (this.batch.length >= this.options.batchSize || this.batchBytes >= MAX_BATCH_BYTES)
            await this.flush(signal);
          break;
        }
        case 'commit':
          this.tracker.commit(this.requireOpenTransaction().id, item.endLsn);
          this.openTransaction = undefined;
          break;
        case 'keepalive':
          this.tracker.observeKeepalive(item.walEnd);
          break;
      }
      // Batch naturally: publish when nothing more is waiting, so a busy stream fills batches up.
      if (this.batch.length > 0 && stream.buffered() === 0) await this.flush(signal);
      this.confirmIfAdvanced();
    }
    if (this.batch.length > 0) await this.flush(signal);
  }

  confirmedLsn(): Lsn {
    return this.lastConfirmed;
  }

  private requireOpenTransaction(): { readonly id: number; readonly fresh: boolean } {
    if (this.openTransaction === undefined)
      throw new Error('stream item outside a transaction (Begin missing)');
    return this.openTransaction;
  }

  /** Puts the current batch into the pipeline; waits only while the pipeline is full. */
  private async flush(signal: AbortSignal): Promise<void> {
    while (this.inFlight.length >= MAX_BATCHES_IN_FLIGHT && this.inFlight[0] !== undefined)
      await untilAborted(this.inFlight[0], this.failed.signal);
    this.throwIfFailed();
    this.deps.observer?.inFlight?.(this.tracker.inFlightEvents());
    const entries = this.batch.splice(0);
    this.batchBytes = 0;
    const records = entries.map((e) => e.record);
    const deps: DeliveryDeps = {
      sink: this.deps.sink,
      store: this.deps.store,
      retry: {
        policy: this.options.retry,
        logger: this.deps.logger,
        observer: this.deps.observer ?? {},
        sleep: this.deps.sleep,
        signal,
      },
    };
    const started = Date.now();
    const checked = entries.every((e) => e.fresh) ? Promise.resolve(records) : findUndelivered(records, deps);
    // Each step waits for the same step of the batch before it: order is kept, and a failure stops the chain.
    const published = Promise.all([checked, this.publishing, this.markingBeforeLast]).then(([toSend]) =>
      publishRecords(toSend, records.length - toSend.length, deps),
    );
    this.publishing = published;
    const marked = Promise.all([published, this.marking]).then(([batch]) => markDelivered(batch, deps));
    this.markingBeforeLast = this.marking;
    this.marking = marked;
    const done = marked.then(
      (summary) => {
        for (const entry of entries) this.tracker.ack(entry.transaction);
        this.deps.observer?.batchDelivered?.({ ...summary, durationMs: Date.now() - started });
        this.deps.observer?.inFlight?.(this.tracker.inFlightEvents());
        this.confirmIfAdvanced();
      },
      (error: unknown) => {
        if (this.failure !== undefined) return;
        this.failure = { error };
        this.failed.abort(error);
      },
    );
    const tracked = done.finally(() => this.inFlight.splice(this.inFlight.indexOf(tracked), 1));
    this.inFlight.push(tracked);
  }

  private throwIfFailed(): void {
    if (this.failure !== undefined) throw this.failure.error;
  }

  private confirmIfAdvanced(): void {
    const confirmable = this.tracker.confirmable();
    if (confirmable <= this.lastConfirmed) return;
    this.lastConfirmed = confirmable;
    this.deps.stream.confirm(confirmable);
    this.deps.observer?.confirmed?.(confirmable);
  }
}
