import { AckTracker } from './ackTracker.js';
import { BatchMarker } from './batchMarker.js';
import { findUndelivered, markDelivered, publishRecords, type DeliveryDeps } from './deliverBatch.js';
import type { Lsn } from './lsn.js';
import { countRecordBytes, MAX_BATCH_BYTES } from './maxBatchBytes.js';
import type { OutboxRecord } from './outboxRecord.js';
import type {
  ChangeStream,
  OutboxStore,
  RelayLogger,
  RelayObserver,
  Sink,
  Sleep,
  StreamItem,
} from './ports.js';
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
  /** How long a small batch's marking waits for others to join it (MARK_DELAY_MS unless set). */
  readonly markDelayMs?: number;
  /** A partial batch is published at most once per lingerMs (0: at once). */
  readonly lingerMs?: number;
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
 * The pipeline is bounded in batches' worth: a batch fills a share of one by its events (of --batch-size) or
 * its bytes (of MAX_BATCH_BYTES), whichever is larger; a full batch is FULL. In integers, so that many small
 * shares add up exactly.
 */
const FULL = 1_000_000;
/**
 * Batches' worth in the pipeline at once. Checking batch N+2, publishing N+1 and marking N overlap; each step
 * still runs one batch at a time, in order.
 */
const MAX_IN_PIPELINE = 3 * FULL;
/**
 * Batches not yet published (being checked, waiting to publish or publishing). When the broker is slow, the
 * events that arrive meanwhile wait in the stream and go out together in the next batch, not one request each.
 */
const MAX_UNPUBLISHED = 2;
/**
 * Batches' worth published and not yet marked: with full batches, N+2 is published only once N is marked. This
 * is the in-flight window a crash can duplicate (guarantee G4): at most two full batches of events.
 */
const MAX_UNMARKED = 2 * FULL;
/**
 * How long a small batch waits for others to join its marking statement. Under steady traffic batches hold an
 * event or two, and a statement per batch costs PostgreSQL a commit and both sides a round trip; delivery is
 * not delayed (the wait comes after the broker's ack), only the marking and the confirmation.
 */
const MARK_DELAY_MS = 20;

const LINGER_OVER = Symbol('linger over');

/** What one run of the pipeline shares between its batches. */
interface Pipeline {
  readonly deps: DeliveryDeps;
  readonly marker: BatchMarker;
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
  private batchBytes = 0;
  private lastConfirmed: Lsn;
  /** The transaction between its Begin and Commit; fresh: committed after freshAfterLsn. */
  private openTransaction: { readonly id: number; readonly fresh: boolean } | undefined;
  /** Completion of each batch still in the pipeline, oldest first. */
  private readonly inFlight: Promise<void>[] = [];
  /** Batches' worth (FULL each) in the pipeline, and of it published (or being published) and not marked. */
  private pipelineFill = 0;
  private unmarkedFill = 0;
  /** Settles once the batch is published (or failed), for each batch not yet published, oldest first. */
  private readonly unpublished: Promise<void>[] = [];
  private publishing: Promise<unknown> = Promise.resolve();
  private lastFlushAt = 0;
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
    const marker = new BatchMarker((batch) => markDelivered(batch, deps), {
      delayMs: this.options.markDelayMs ?? MARK_DELAY_MS,
      rowsAtOnce: this.options.batchSize,
    });
    try {
      await this.consume({ deps, marker });
    } finally {
      // Whatever ends the run, let the batches already sent finish marking: a restart then skips them.
      marker.finish();
      await Promise.allSettled(this.inFlight);
    }
    this.throwIfFailed();
    this.confirmIfAdvanced();
  }

  private async consume(pipeline: Pipeline): Promise<void> {
    const { stream } = this.deps;
    /** A next() that a linger cut short: the item it brings is the next one. */
    let next: Promise<StreamItem | undefined> | undefined;
    for (;;) {
      this.throwIfFailed();
      let item: StreamItem | undefined;
      if (next === undefined && stream.buffered() > 0) item = await stream.next();
      else {
        // On a quiet stream the next item can be seconds away (or never come): a failed batch ends the wait.
        next ??= stream.next();
        const got = await untilAborted(this.lingerFor(next), this.failed.signal);
        if (got === LINGER_OVER) {
          await this.flush(pipeline);
          continue;
        }
        next = undefined;
        item = got;
      }
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
            await this.flush(pipeline);
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
      if (this.batch.length > 0 && stream.buffered() === 0 && this.publishDueIn() <= 0)
        await this.flush(pipeline);
      this.confirmIfAdvanced();
    }
    if (this.batch.length > 0) await this.flush(pipeline);
  }

  /** Milliseconds until a partial batch may go: requests are paced at one per lingerMs. */
  private publishDueIn(): number {
    return this.lastFlushAt + (this.options.lingerMs ?? 0) - Date.now();
  }

  /** `next`, or LINGER_OVER when a partial batch is due first. */
  private lingerFor(
    next: Promise<StreamItem | undefined>,
  ): Promise<StreamItem | undefined | typeof LINGER_OVER> {
    if (this.batch.length === 0) return next;
    const due = this.publishDueIn();
    if (due <= 0) return Promise.resolve(LINGER_OVER);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => resolve(LINGER_OVER), due);
      next.finally(() => clearTimeout(timer)).then(resolve, reject);
    });
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
  private async flush({ deps, marker }: Pipeline): Promise<void> {
    const fill = Math.min(
      FULL,
      Math.max(
        Math.ceil((this.batch.length * FULL) / this.options.batchSize),
        Math.ceil((this.batchBytes * FULL) / MAX_BATCH_BYTES),
      ),
    );
    for (;;) {
      const oldest =
        this.unpublished.length >= MAX_UNPUBLISHED
          ? this.unpublished[0]
          : this.pipelineFill + fill > MAX_IN_PIPELINE
            ? this.inFlight[0]
            : undefined;
      if (oldest === undefined) break;
      await untilAborted(oldest, this.failed.signal);
    }
    this.throwIfFailed();
    this.lastFlushAt = Date.now();
    this.deps.observer?.inFlight?.(this.tracker.inFlightEvents());
    const entries = this.batch.splice(0);
    this.batchBytes = 0;
    this.pipelineFill += fill;
    const records = entries.map((e) => e.record);
    const started = Date.now();
    let publishMs = 0;
    const checked = entries.every((e) => e.fresh) ? Promise.resolve(records) : findUndelivered(records, deps);
    // Each step waits for the same step of the batch before it: order is kept, and a failure stops the chain.
    const published = Promise.all([checked, this.publishing]).then(async ([toSend]) => {
      await this.waitForRoomToPublish(fill, marker);
      this.unmarkedFill += fill;
      const batch = await publishRecords(toSend, records.length - toSend.length, deps);
      publishMs = Date.now() - started;
      return batch;
    });
    this.publishing = published;
    const publishSettled: Promise<void> = published
      .then(
        () => undefined,
        () => undefined,
      )
      .finally(() => this.unpublished.splice(this.unpublished.indexOf(publishSettled), 1));
    this.unpublished.push(publishSettled);
    const marked = published.then(async (batch) => ({ batch, markMs: await marker.add(batch) }));
    const done = marked.then(
      ({ batch, markMs }) => {
        this.pipelineFill -= fill;
        this.unmarkedFill -= fill;
        for (const entry of entries) this.tracker.ack(entry.transaction);
        // The wait to join other batches' marking is not the batch's: only the statement's time counts.
        this.deps.observer?.batchDelivered?.({ ...batch, durationMs: publishMs + markMs });
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

  /** Publishing waits while the batches published and not yet marked would exceed the in-flight window. */
  private async waitForRoomToPublish(fill: number, marker: BatchMarker): Promise<void> {
    while (this.unmarkedFill > 0 && this.unmarkedFill + fill > MAX_UNMARKED) {
      this.throwIfFailed();
      // The oldest batch in the pipeline is published and waiting for its marking: do not let it wait longer.
      marker.hurry();
      const oldest = this.inFlight[0];
      if (oldest === undefined) break;
      await untilAborted(oldest, this.failed.signal);
    }
    this.throwIfFailed();
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
