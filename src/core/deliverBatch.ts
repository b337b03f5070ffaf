import type { OutboxRecord, RejectedRecord } from './outboxRecord.js';
import type { OutboxStore, Sink } from './ports.js';
import { retryUntilDone, type RetryContext } from './retryUntilDone.js';

export interface DeliveryDeps {
  readonly sink: Sink;
  readonly store: OutboxStore;
  readonly retry: RetryContext;
}

export interface PublishedBatch {
  readonly published: readonly OutboxRecord[];
  readonly rejected: readonly RejectedRecord[];
  readonly skipped: number;
}

/** Step 1: leave out rows already processed or dead-lettered (replays after restarts and mode switches). */
export async function findUndelivered(
  records: readonly OutboxRecord[],
  deps: DeliveryDeps,
): Promise<OutboxRecord[]> {
  const ids = records.map((r) => r.id);
  const finished = await retryUntilDone(
    'check processed rows',
    () => deps.store.findFinished(ids),
    deps.retry,
  );
  return records.filter((r) => !finished.has(r.id));
}

/** Step 2: publish, in order; what the broker can never take is copied to the dead-letter topic, if any. */
export async function publishRecords(
  records: readonly OutboxRecord[],
  skipped: number,
  deps: DeliveryDeps,
): Promise<PublishedBatch> {
  if (records.length === 0) return { published: [], rejected: [], skipped };
  let toSend = records;
  let attempts = 0;
  const { rejected } = await retryUntilDone(
    'publish to Kafka',
    async () => {
      // Between attempts an operator may have dead-lettered an event that cannot go (walbox dlq skip): leave it
      // out, so that one event's topic problem does not hold up the stream until a restart.
      if (attempts++ > 0) toSend = await findUndelivered(toSend, deps);
      return toSend.length === 0 ? { rejected: [] } : deps.sink.publish(toSend);
    },
    deps.retry,
  );
  skipped += records.length - toSend.length;
  for (const { record, reason } of rejected) {
    deps.retry.logger.error(
      { event_id: record.id, event_type: record.eventType, aggregate_id: record.aggregateId, reason },
      'event rejected by the broker: dead-lettered',
    );
  }
  if (rejected.length > 0) {
    await retryUntilDone(
      'publish to the dead-letter topic',
      () => deps.sink.publishDeadLetters(rejected),
      deps.retry,
    );
  }
  const rejectedIds = new Set(rejected.map((r) => r.record.id));
  const published = toSend.filter((r) => !rejectedIds.has(r.id));
  deps.retry.observer.published?.(published);
  return { published, rejected, skipped };
}

/** Step 3: record the outcome in the rows; only then may the batch's position advance. */
export async function markDelivered(batch: PublishedBatch, deps: DeliveryDeps): Promise<PublishedBatch> {
  if (batch.rejected.length > 0) {
    await retryUntilDone(
      'mark rows dead-lettered',
      () => deps.store.markDeadLettered(batch.rejected),
      deps.retry,
    );
  }
  if (batch.published.length > 0) {
    await retryUntilDone('mark rows processed', () => deps.store.markProcessed(batch.published), deps.retry);
  }
  return batch;
}

/**
 * Delivers one batch, all three steps in order. Returns only when every row is delivered and marked, or
 * dead-lettered.
 */
export async function deliverBatch(
  records: readonly OutboxRecord[],
  deps: DeliveryDeps,
): Promise<PublishedBatch> {
  const toSend = await findUndelivered(records, deps);
  return markDelivered(await publishRecords(toSend, records.length - toSend.length, deps), deps);
}
