import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { Partitioners, type Message, type PartitionMetadata } from 'kafkajs';

import { createKeyPartitioner, hashKey } from '../../../../src/sink/kafka/createKeyPartitioner.js';
import { javaPartition } from '../../../support/javaPartition.js';

function metadata(partitions: number): PartitionMetadata[] {
  return Array.from({ length: partitions }, (_, partitionId) => ({
    partitionErrorCode: 0,
    partitionId,
    leader: 0,
    replicas: [0],
    isr: [0],
  }));
}

/** Keys of every length up to 40 from ASCII, Latin-1, CJK, emoji (surrogate pairs) and lone surrogates. */
function makeKeys(): string[] {
  const pieces = [
    'a',
    'Z',
    '7',
    '-',
    ' ',
    'é',
    'ß',
    'ж',
    '中',
    '😀',
    '\ud800',
    '\udfff',
    '\u0000',
    '\u007f',
    '\u0080',
  ];
  let seed = 11;
  const random = (below: number): number => {
    seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
    return seed % below;
  };
  const keys = ['', 'order-1', 'customer-42', '5f0c1c3e-0000-4000-8000-000000000001', 'x'.repeat(1_000)];
  for (let n = 0; n < 3_000; n++) {
    let key = '';
    const length = random(41);
    for (let i = 0; i < length; i++) key += pieces[random(pieces.length)] ?? '';
    keys.push(key);
  }
  return keys;
}

describe('createKeyPartitioner', () => {
  it("picks kafkajs's DefaultPartitioner's partition for every key, and the Java client's", () => {
    for (const partitions of [1, 3, 7, 12, 100]) {
      const partitionMetadata = metadata(partitions);
      const ours = createKeyPartitioner();
      const kafkajs = Partitioners.DefaultPartitioner();
      for (const key of makeKeys()) {
        for (const message of [
          { key, value: null },
          { key: Buffer.from(key), value: null },
        ] as Message[]) {
          const args = { topic: 'orders', partitionMetadata, message };
          assert.equal(ours(args), kafkajs(args), `${JSON.stringify(key)} over ${partitions}`);
        }
        const partition = ours({ topic: 'orders', partitionMetadata, message: { key, value: null } });
        assert.equal(partition, javaPartition(key, partitions), JSON.stringify(key));
      }
    }
  });

  it('leaves a message with a partition of its own or without a key to kafkajs', () => {
    const partitionMetadata = metadata(3);
    const partition = createKeyPartitioner();
    assert.equal(
      partition({ topic: 'orders', partitionMetadata, message: { key: 'a', value: null, partition: 2 } }),
      2,
    );
    // Without a key kafkajs goes round the partitions.
    const picked = new Set(
      [0, 1, 2].map(() =>
        partition({ topic: 'orders', partitionMetadata, message: { key: null, value: 'v' } }),
      ),
    );
    assert.deepEqual([...picked].sort(), [0, 1, 2]);
  });

  it('hashes as murmur2 does, the same for a key and its UTF-8 bytes', () => {
    // Reference values of org.apache.kafka.common.utils.Utils.murmur2, from Kafka's own UtilsTest.
    assert.equal(hashKey('21'), -973932308);
    assert.equal(hashKey('foobar'), -790332482);
    assert.equal(hashKey('a-little-bit-long-string'), -985981536);
    assert.equal(hashKey('a-little-bit-longer-string'), -1486304829);
    assert.equal(hashKey('lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8'), -58897971);
    assert.equal(hashKey('abc'), 479470107);
    for (const key of ['', 'é中😀', 'x'.repeat(300)]) assert.equal(hashKey(key), hashKey(Buffer.from(key)));
  });
});
