import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { describe, it } from 'node:test';

// Loads kafkajs as the relay does: through src/sink/kafka/kafkajs.ts.
import { KafkaSink } from '../../../../src/sink/kafka/kafkaSink.js';
import {
  groupMessagesPerPartition,
  speedUpPartitionGrouping,
  type GroupingArgs,
} from '../../../../src/sink/kafka/speedUpPartitionGrouping.js';
import { loadKafkajsAfresh } from '../../../support/loadKafkajsAfresh.js';

const load = createRequire(__filename);
const GROUPING = 'kafkajs/src/producer/groupMessagesPerPartition';

interface TestMessage {
  readonly n: number;
  readonly partition: number;
}
type Grouping = (args: GroupingArgs<TestMessage>) => Record<number, TestMessage[]>;

/** kafkajs 2.2.4's own grouping, loaded afresh beside the one its producer holds. */
function loadKafkajsGrouping(): Grouping {
  return loadKafkajsAfresh(GROUPING) as Grouping;
}

/** Runs a grouping with a partitioner that records its calls. */
function group(
  grouping: Grouping,
  messages: readonly TestMessage[],
  partitions: number,
): { result: Record<number, TestMessage[]>; keys: string[]; calls: unknown[] } {
  const calls: unknown[] = [];
  const partitionMetadata = Array.from({ length: partitions }, (_, partitionId) => ({ partitionId }));
  const result = grouping({
    topic: 'orders',
    partitionMetadata,
    messages,
    partitioner: (args) => {
      calls.push([args.topic, args.partitionMetadata === partitionMetadata, args.message]);
      return args.message.partition;
    },
  });
  return { result, keys: Object.keys(result), calls };
}

describe('speedUpPartitionGrouping', () => {
  it("is what kafkajs's producer uses once walbox has loaded kafkajs", () => {
    assert.equal(typeof KafkaSink, 'function');
    assert.notEqual(load.cache[load.resolve('kafkajs/src/producer/sendMessages')], undefined);
    assert.equal(load(GROUPING), groupMessagesPerPartition);
    assert.equal(speedUpPartitionGrouping(), 'installed');
  });

  it('groups as kafkajs 2.2.4 does: the same partitioner calls, the same arrays in message order', () => {
    const kafkajs = loadKafkajsGrouping();
    assert.notEqual(kafkajs, groupMessagesPerPartition);
    let seed = 7;
    const random = (below: number): number => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return seed % below;
    };
    for (const partitions of [0, 1, 3, 12]) {
      for (const count of [0, 1, 2, 199, 200, 1_000]) {
        const messages = Array.from({ length: count }, (_, n) => ({
          n,
          partition: random(Math.max(partitions, 1)),
        }));
        const expected = group(kafkajs, messages, partitions);
        const actual = group(groupMessagesPerPartition, messages, partitions);
        assert.deepEqual(actual, expected, `${count} messages, ${partitions} partitions`);
      }
    }
  });
});
