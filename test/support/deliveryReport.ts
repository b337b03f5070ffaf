import assert from 'node:assert/strict';

import type { ConsumedMessage } from './topicReader.js';
import type { WrittenEvent } from './outboxWriter.js';
import type { RelaySetup } from './relaySetup.js';

export interface DeliveryReport {
  readonly committed: number;
  readonly delivered: number;
  readonly lost: string[];
  /** Delivered but never committed (e.g. rolled back). */
  readonly phantom: string[];
  /** Deliveries beyond the first of an id. */
  readonly duplicates: number;
  /** Aggregates whose first deliveries are not in version order. */
  readonly reordered: string[];
}

/**
 * Compares what writers committed with what reached Kafka: by event id (the `id` header), and per aggregate by
 * the version carried in the payload, judged on each event's first delivery.
 */
export function reportDelivery(
  committed: readonly WrittenEvent[],
  messages: readonly ConsumedMessage[],
): DeliveryReport {
  const committedIds = new Map(committed.map((e) => [e.id, e]));
  const seen = new Set<string>();
  const versions = new Map<string, number[]>();
  let duplicates = 0;
  const phantom: string[] = [];
  for (const message of messages) {
    const id = message.headers['id'] ?? '';
    if (seen.has(id)) {
      duplicates++;
      continue;
    }
    seen.add(id);
    const event = committedIds.get(id);
    if (event === undefined) {
      phantom.push(id);
      continue;
    }
    const list = versions.get(event.aggregateId) ?? [];
    list.push(event.version);
    versions.set(event.aggregateId, list);
  }
  const reordered = [...versions]
    .filter(([, list]) => list.some((v, i) => i > 0 && v <= (list[i - 1] ?? 0)))
    .map(([a]) => a);
  return {
    committed: committed.length,
    delivered: seen.size,
    lost: [...committedIds.keys()].filter((id) => !seen.has(id)),
    phantom,
    duplicates,
    reordered,
  };
}

/** Reads the setup's topic until every committed event arrived; nothing lost, phantom or reordered. */
export async function assertAllDelivered(
  setup: RelaySetup,
  committed: readonly WrittenEvent[],
  maxDuplicates: number,
): Promise<void> {
  const topic = await setup.reader();
  await topic.waitForIds(committed.map((e) => e.id));
  const report = reportDelivery(committed, topic.messages);
  assert.deepEqual(
    { lost: report.lost.length, phantom: report.phantom.length, reordered: report.reordered },
    { lost: 0, phantom: 0, reordered: [] },
  );
  assert.ok(report.duplicates <= maxDuplicates, `${report.duplicates} duplicates (at most ${maxDuplicates})`);
}
