import { AckTracker } from './ackTracker.js';
import { deliverBatch } from './deliverBatch.js';
import type { Lsn } from './lsn.js';
import type { OutboxRecord } from './outboxRecord.js';
import type { ChangeStream, OutboxStore, RelayLogger, RelayObserver, Sink, Sleep } from './ports.js';
import type { RetryPolicy } from './retryUntilDone.js';

export interface StreamRelayOptions {
  readonly batchSize: number;
  readonly retry: RetryPolicy;
  /** The slot's confirmed_flush_lsn when streaming started: never confirm below it. */
  readonly startLsn: Lsn;
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
}

/**
 * WAL mode's pipeline: stream items in commit order → batches → sink → mark → confirm. One batch is in flight
 * at a time, so per-aggregate order is the stream's order. Events may be published before their Commit
 * arrives (only committed transactions are streamed); a transaction's end LSN is confirmed once all its events
 * are delivered and marked, and never before the transactions ahead of it.
 */
export class StreamRelay {
  private readonly tracker: AckTracker;
  private readonly batch: BatchEntry[] = [];
  private lastConfirmed: Lsn;
  private openTransaction: number | undefined;

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
    const { stream } = this.deps;
    for (;;) {
      const item = await stream.next();
      if (item === undefined) break;
      switch (item.kind) {
        case 'begin':
          this.openTransaction = this.tracker.begin();
          break;
        case 'record': {
          const transaction = this.requireOpenTransaction();
          this.tracker.addEvent(transaction);
          this.batch.push({ record: item.record, transaction });
          if (this.batch.length >= this.options.batchSize) await this.flush(signal);
          break;
        }
        case 'commit':
          this.tracker.commit(this.requireOpenTransaction(), item.endLsn);
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
    this.confirmIfAdvanced();
  }

  /** Events received but not yet delivered and marked. */
  inFlightEvents(): number {
    return this.tracker.inFlightEvents();
  }

  confirmedLsn(): Lsn {
    return this.lastConfirmed;
  }

  private requireOpenTransaction(): number {
    if (this.openTransaction === undefined)
      throw new Error('stream item outside a transaction (Begin missing)');
    return this.openTransaction;
  }

  private async flush(signal: AbortSignal): Promise<void> {
    const entries = this.batch.splice(0);
    const started = Date.now();
    const summary = await deliverBatch(
      entries.map((e) => e.record),
      {
        sink: this.deps.sink,
        store: this.deps.store,
        retry: {
          policy: this.options.retry,
          logger: this.deps.logger,
          observer: this.deps.observer ?? {},
          sleep: this.deps.sleep,
          signal,
        },
      },
    );
    for (const entry of entries) this.tracker.ack(entry.transaction);
    this.deps.observer?.batchDelivered?.({ ...summary, durationMs: Date.now() - started });
  }

  private confirmIfAdvanced(): void {
    const confirmable = this.tracker.confirmable();
    if (confirmable <= this.lastConfirmed) return;
    this.lastConfirmed = confirmable;
    this.deps.stream.confirm(confirmable);
    this.deps.observer?.confirmed?.(confirmable);
  }
}
