// The interfaces core/ needs from the outside world. Sources, sinks and stores implement them; core/ imports
// nothing else from outside itself.
import type { Lsn } from './lsn.js';
import type { OutboxRecord, RejectedRecord } from './outboxRecord.js';

/** What a change stream yields, in the order the server sent it. */
export type StreamItem =
  /** commitLsn: where the transaction's commit record starts. */
  | { readonly kind: 'begin'; readonly commitLsn: Lsn }
  | { readonly kind: 'record'; readonly record: OutboxRecord }
  | { readonly kind: 'commit'; readonly endLsn: Lsn }
  | { readonly kind: 'keepalive'; readonly walEnd: Lsn };

/** A stream of committed outbox inserts (WAL mode). */
export interface ChangeStream {
  /** The next item, waiting if none is buffered; undefined once the stream has stopped and is drained. */
  next(): Promise<StreamItem | undefined>;
  /** Items received and buffered now: the relay flushes its batch when nothing more is waiting. */
  buffered(): number;
  /** Everything up to `lsn` is delivered and marked: the position may be reported to the server. */
  confirm(lsn: Lsn): void;
  /** Stop receiving; items already buffered are still returned by next(). */
  stopReceiving(): Promise<void>;
}

export interface PublishResult {
  /** Records the broker will never accept; every record not listed here was acked. */
  readonly rejected: readonly RejectedRecord[];
}

export interface Sink {
  /**
   * Resolves once every record is acked by the broker (acks=all) or listed as rejected. Throws a retriable
   * error when the broker cannot be reached; the caller retries the same records, in order.
   */
  publish(records: readonly OutboxRecord[]): Promise<PublishResult>;
  /** Best-effort copy of rejected records to the dead-letter topic, when one is configured. */
  publishDeadLetters(rejected: readonly RejectedRecord[]): Promise<void>;
  /** The topic `record` goes to, or undefined when it cannot be routed (it is then rejected by publish). */
  topicOf(record: OutboxRecord): string | undefined;
}

/** The outbox table, as far as delivery is concerned. */
export interface OutboxStore {
  /** Ids among `ids` whose rows are already processed or dead-lettered (replays are skipped). */
  findFinished(ids: readonly string[]): Promise<ReadonlySet<string>>;
  markProcessed(records: readonly OutboxRecord[]): Promise<void>;
  markDeadLettered(rejected: readonly RejectedRecord[]): Promise<void>;
}

/** The subset of pino that core/ uses, so core/ stays free of the logging library. */
export interface RelayLogger {
  debug(fields: object, message: string): void;
  info(fields: object, message: string): void;
  warn(fields: object, message: string): void;
  error(fields: object, message: string): void;
}

/** A batch whose rows are all published (or dead-lettered) and marked. */
export interface DeliveredBatch {
  readonly published: readonly OutboxRecord[];
  readonly rejected: readonly RejectedRecord[];
  /** Rows of the batch that were already delivered (replays). */
  readonly skipped: number;
  readonly durationMs: number;
}

/** Hooks for metrics and readiness; every method is optional. */
export interface RelayObserver {
  /** The broker acked these records (before their rows are marked): delivery latency is measured here. */
  published?(records: readonly OutboxRecord[]): void;
  batchDelivered?(batch: DeliveredBatch): void;
  /** A publish attempt of these records failed; they will be tried again (poll mode counts their attempts). */
  publishFailed?(records: readonly OutboxRecord[]): void;
  /** Events received (or claimed) and not yet delivered and marked. */
  inFlight?(events: number): void;
  retrying?(summary: { step: string; attempt: number; delayMs: number; error: Error }): void;
  recovered?(summary: { step: string }): void;
  confirmed?(lsn: Lsn): void;
}

/** Waits `ms`, or rejects as soon as `signal` aborts. */
export type Sleep = (ms: number, signal: AbortSignal) => Promise<void>;
