import type { Lsn } from './lsn.js';

/** One outbox row on its way to the broker, with every value as PostgreSQL printed it. */
export interface OutboxRecord {
  readonly id: string;
  readonly aggregateType: string;
  readonly aggregateId: string;
  readonly eventType: string;
  /** jsonb text exactly as PostgreSQL outputs it (payload::text): never parsed. */
  readonly payload: string;
  /** jsonb text of the optional headers object, or null. */
  readonly headers: string | null;
  /** ISO 8601 UTC with microseconds. */
  readonly createdAt: string;
  readonly seq: string;
  /**
   * WAL mode: the writing transaction's id. Its commit can reach us a moment before it is visible to other
   * sessions, so marking the row waits for the transaction to become visible.
   */
  readonly xid?: number;
  /** WAL mode: the writing transaction's commit time (Unix ms), for the delivery latency metric. */
  readonly committedAtMs?: number;
  /** WAL mode: LSN of the change (for logs only: not monotonic across transactions). */
  readonly lsn?: Lsn;
  /** Why the row cannot be published as it is (e.g. a NULL where a value is needed): it is dead-lettered. */
  readonly problem?: string;
}

/** Why the broker will never take a record: the row is dead-lettered with this text as last_error. */
export interface RejectedRecord {
  readonly record: OutboxRecord;
  readonly reason: string;
}
