import { replaceKafkajsModule, type KafkajsPatch } from './replaceKafkajsModule.js';

export interface GroupingArgs<M> {
  readonly topic: string;
  readonly partitionMetadata: readonly unknown[];
  readonly messages: readonly M[];
  readonly partitioner: (args: {
    topic: string;
    partitionMetadata: readonly unknown[];
    message: M;
  }) => number;
}

const GROUPING = 'kafkajs/src/producer/groupMessagesPerPartition';
const SEND_MESSAGES = 'kafkajs/src/producer/sendMessages';

/**
 * kafkajs 2.2.4's grouping of a produce request's messages by partition, in linear time: the same partitioner
 * calls in the same order, the same object of arrays in message order. kafkajs copies a partition's array for
 * every message it adds (`[...current, message]`), so its cost grows with the square of the messages per
 * partition: 0.6–1.1 µs per message at 200 per request, 2.9–8 µs (29–80 ms per request, the event loop held) at
 * 10 000.
 */
export function groupMessagesPerPartition<M>({
  topic,
  partitionMetadata,
  messages,
  partitioner,
}: GroupingArgs<M>): Record<number, M[]> {
  const result: Record<number, M[]> = {};
  if (partitionMetadata.length === 0) return result;
  for (const message of messages) {
    const partition = partitioner({ topic, partitionMetadata, message });
    (result[partition] ??= []).push(message);
  }
  return result;
}

/**
 * Puts groupMessagesPerPartition in the place of kafkajs's own, before kafkajs's sendMessages module loads and
 * keeps the one it finds (replaceKafkajsModule says when that is too late).
 */
export function speedUpPartitionGrouping(): KafkajsPatch {
  return replaceKafkajsModule(GROUPING, [SEND_MESSAGES], () => groupMessagesPerPartition);
}
