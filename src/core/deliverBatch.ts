import type { OutboxRecord } from './outboxRecord.js';
import type { OutboxStore, Sink } from './ports.js';
import { retryUntilDone, type RetryContext } from './retryUntilDone.js';

export interface DeliverySummary {
  readonly published: number;
  readonly skipped: number;
  readonly rejected: number;
}

/**
 * Delivers one batch, in order: skip rows already processed (replays after restarts and mode switches), publish
 * the rest, dead-letter what the broker can never take, then mark the published rows processed. Returns only
 * when every row of the batch is delivered and marked, or dead-lettered: only then may its position advance.
 */
export async function deliverBatch(
  records: readonly OutboxRecord[],
  deps: { readonly sink: Sink; readonly store: OutboxStore; readonly retry: RetryContext },
): Promise<DeliverySummary> {
  const { sink, store, retry } = deps;
  const started = Date.now();
  const ids = records.map((r) => r.id);
  const finished = await retryUntilDone('check processed rows', () => store.findFinished(ids), retry);
  const toSend = records.filter((r) => !finished.has(r.id));
  if (toSend.length === 0) return { published: 0, skipped: records.length, rejected: 0 };

  const { rejected } = await retryUntilDone('publish to Kafka', () => sink.publish(toSend), retry);
  if (rejected.length > 0) {
    for (const { record, reason } of rejected) {
      retry.logger.error(
        { event_id: record.id, event_type: record.eventType, aggregate_id: record.aggregateId, reason },
        'event rejected by the broker: dead-lettered',
      );
    }
    await retryUntilDone('publish to the dead-letter topic', () => sink.publishDeadLetters(rejected), retry);
    await retryUntilDone('mark rows dead-lettered', () => store.markDeadLettered(rejected), retry);
  }
  const rejectedIds = new Set(rejected.map((r) => r.record.id));
  const published = toSend.filter((r) => !rejectedIds.has(r.id));
  if (published.length > 0) {
    await retryUntilDone('mark rows processed', () => store.markProcessed(published), retry);
  }
  retry.logger.debug(
    {
      published: published.length,
      skipped: finished.size,
      rejected: rejected.length,
      ms: Date.now() - started,
    },
    'batch delivered',
  );
  return { published: published.length, skipped: records.length - toSend.length, rejected: rejected.length };
}
