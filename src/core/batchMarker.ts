import type { PublishedBatch } from './deliverBatch.js';

export interface BatchMarkerOptions {
  /** How long the first batch waiting to be marked waits for others to join its statement. */
  readonly delayMs: number;
  /** Rows (processed or dead-lettered) that are marked at once, without waiting. */
  readonly rowsAtOnce: number;
}

interface WaitingBatch {
  readonly batch: PublishedBatch;
  readonly resolve: (markMs: number) => void;
  readonly reject: (error: unknown) => void;
}

/**
 * Marks published batches in order, one marking at a time, gathering small batches into one marking. Under
 * steady traffic a batch holds an event or two, and each marking is a statement, a commit and a round trip for
 * PostgreSQL and the relay; gathering the batches published within `delayMs` makes that one per batch of
 * batches. A full batch's worth of rows goes at once, so a drain marks as it did batch by batch.
 */
export class BatchMarker {
  private readonly waiting: WaitingBatch[] = [];
  private waitingRows = 0;
  /** When the oldest waiting batch arrived. */
  private oldestAt = 0;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private marking = false;
  /** Mark what waits as soon as the marking in progress is done (someone waits for room). */
  private hurried = false;
  /** No more waiting: the relay is stopping. */
  private finishing = false;

  constructor(
    private readonly mark: (batch: PublishedBatch) => Promise<unknown>,
    private readonly options: BatchMarkerOptions,
  ) {}

  /** Resolves with how long the marking statement(s) took, once the batch's rows are marked. */
  add(batch: PublishedBatch): Promise<number> {
    const rows = batch.published.length + batch.rejected.length;
    // Nothing to mark and nothing ahead of it (all its rows were delivered before): done now.
    if (rows === 0 && !this.marking && this.waiting.length === 0) return Promise.resolve(0);
    return new Promise((resolve, reject) => {
      if (this.waiting.length === 0) this.oldestAt = Date.now();
      this.waiting.push({ batch, resolve, reject });
      this.waitingRows += rows;
      this.schedule();
    });
  }

  /** Marks what is waiting without waiting for more (the pipeline is full). */
  hurry(): void {
    this.hurried = true;
    this.schedule();
  }

  /** From now on marks without waiting for more (the relay is stopping: let it finish soon). */
  finish(): void {
    this.finishing = true;
    this.schedule();
  }

  private schedule(): void {
    if (this.marking || this.waiting.length === 0) return;
    const now = this.hurried || this.finishing || this.waitingRows >= this.options.rowsAtOnce;
    const wait = now ? 0 : this.oldestAt + this.options.delayMs - Date.now();
    if (wait <= 0) {
      this.start();
      return;
    }
    this.timer ??= setTimeout(() => {
      this.timer = undefined;
      this.schedule();
    }, wait);
  }

  private start(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.hurried = false;
    const group = this.waiting.splice(0);
    this.waitingRows = 0;
    this.marking = true;
    const started = Date.now();
    void this.mark(mergeBatches(group.map((w) => w.batch)))
      .then(
        () => {
          const markMs = Date.now() - started;
          for (const waiting of group) waiting.resolve(markMs);
        },
        (error: unknown) => {
          for (const waiting of group) waiting.reject(error);
        },
      )
      .finally(() => {
        this.marking = false;
        this.schedule();
      });
  }
}

function mergeBatches(batches: readonly PublishedBatch[]): PublishedBatch {
  if (batches.length === 1 && batches[0] !== undefined) return batches[0];
  return {
    published: batches.flatMap((b) => b.published),
    rejected: batches.flatMap((b) => b.rejected),
    skipped: batches.reduce((sum, b) => sum + b.skipped, 0),
  };
}
