import type { Lsn } from './lsn.js';

/** One outbox row on its way to the broker, with every value as PostgreSQL printed it. */
export interface OutboxRecord {
  readonly id: string;
  readonly aggregateType: string;
  readonly aggregateId: string;
  readonly eventType: string;
  /**
   * The payload column's text exactly as PostgreSQL outputs it (payload::text): never parsed. NULL (a nullable
   * payload column, as Debezium's) is published as a tombstone, a record with a null value, as Debezium does.
   * WAL mode keeps it as UTF-8 bytes, from the replication message to the producer: large events then do not
   * churn the JavaScript heap (docs/performance.md, "Large events").
   */
  readonly payload: string | Buffer | null;
  /** jsonb text of the optional headers object, or null. */
  readonly headers: string | null;
  /** ISO 8601 UTC with microseconds. */
  readonly createdAt: string;
  /** The event-timestamp column in Unix ms (parseEventTime); undefined when it has no usable instant. */
  readonly eventTimeMs?: number | undefined;
  /** Values of the --header-columns, in their order (null: SQL NULL, no header). */
  readonly headerValues?: readonly (string | null)[];
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
