import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { describe, it } from 'node:test';

import type produceRequest from 'kafkajs/src/protocol/requests/produce/v3/request';
import type { ProduceMessage, ProduceRequestArgs } from 'kafkajs/src/protocol/requests/produce/v3/request';
import { Types as CompressionTypes } from 'kafkajs/src/protocol/message/compression';
import Long from 'kafkajs/src/utils/long';

// Loads kafkajs as the relay does: through src/sink/kafka/kafkajs.ts.
import { KafkaSink } from '../../../../src/sink/kafka/kafkaSink.js';
import {
  createProduceRequest,
  speedUpProduceRequest,
} from '../../../../src/sink/kafka/speedUpProduceRequest.js';
import { speedUpRecordEncoding } from '../../../../src/sink/kafka/speedUpRecordEncoding.js';
import { makeRecordCases, PLAIN_CASES } from '../../../support/kafkaRecordCases.js';
import { loadKafkajsAfresh } from '../../../support/loadKafkajsAfresh.js';

const load = createRequire(__filename);
const PRODUCE_V3 = load.resolve('kafkajs/src/protocol/requests/produce/v3/request');
type ProduceRequestFactory = typeof produceRequest;

/** kafkajs 2.2.4's own produce request v3, loaded afresh beside the one the relay's load order cached. */
function loadKafkajsProduceRequest(): ProduceRequestFactory {
  return loadKafkajsAfresh(PRODUCE_V3) as ProduceRequestFactory;
}

/** The test's records as messages: every third without a timestamp, the rest with numbers or numeric strings. */
function makeMessages(): ProduceMessage[] {
  return makeRecordCases().map((args, i) => {
    const message = { key: args.key, value: args.value, headers: args.headers } as ProduceMessage;
    if (i % 3 === 1) message.timestamp = String(1_764_000_000_000 + ((i * 37) % 1_000));
    if (i % 3 === 2) message.timestamp = 1_764_000_000_000 - i;
    return message;
  });
}

/** Requests of every shape kafkajs's producer sends: acks, transactions, idempotence, compression, many topics. */
function makeRequests(): ProduceRequestArgs[] {
  const messages = makeMessages();
  const plain = messages.slice(0, PLAIN_CASES);
  const odd = messages.slice(PLAIN_CASES);
  return [
    {
      acks: -1,
      timeout: 30_000,
      topicData: [{ topic: 'orders', partitions: [{ partition: 0, messages: plain.slice(0, 200) }] }],
    },
    {
      acks: 1,
      timeout: 5_000,
      topicData: [{ topic: 'orders', partitions: [{ partition: 2, messages: plain.slice(0, 1) }] }],
    },
    {
      acks: 0,
      timeout: 5_000,
      topicData: [{ topic: 'orders', partitions: [{ partition: 0, messages: [] }] }],
    },
    {
      acks: -1,
      timeout: 30_000,
      topicData: [
        {
          topic: 'orders',
          partitions: [
            { partition: 0, messages: plain.slice(200, 800) },
            { partition: 1, messages: plain.slice(800, 1_500), firstSequence: 42 },
          ],
        },
        { topic: 'zamówienia', partitions: [{ partition: 5, messages: plain.slice(1_500) }] },
      ],
    },
    {
      acks: -1,
      timeout: 30_000,
      transactionalId: 'walbox-tx',
      producerId: Long.fromInt(4_242),
      producerEpoch: 3,
      topicData: [
        { topic: 'orders', partitions: [{ partition: 0, messages: plain.slice(0, 50), firstSequence: 7 }] },
      ],
    },
    {
      acks: -1,
      timeout: 30_000,
      compression: CompressionTypes.GZIP,
      topicData: [{ topic: 'orders', partitions: [{ partition: 0, messages: plain.slice(0, 300) }] }],
    },
    {
      acks: -1,
      timeout: 30_000,
      topicData: [{ topic: 'orders', partitions: [{ partition: 0, messages: odd }] }],
    },
    {
      acks: -1,
      timeout: 30_000,
      topicData: [
        {
          topic: 'orders',
          partitions: [
            {
              partition: 0,
              // A zero timestamp takes the send time in the delta, not in the batch's first and max timestamps.
              messages: [
                { value: 'zero', timestamp: 0 },
                { value: 'five', timestamp: '5' },
                { value: 'none' },
              ],
            },
          ],
        },
      ],
    },
    // kafkajs refuses an empty timestamp (its Long cannot parse it): so must walbox's request.
    {
      acks: -1,
      timeout: 30_000,
      topicData: [
        { topic: 'orders', partitions: [{ partition: 0, messages: [{ value: 'e', timestamp: '' }] }] },
      ],
    },
  ];
}

/** What a request factory makes of a request: its bytes and properties, or the error its encoding throws. */
async function encodeWith(factory: ProduceRequestFactory, args: ProduceRequestArgs): Promise<unknown> {
  const request = factory(args);
  const described = [request.apiKey, request.apiVersion, request.apiName, request.expectResponse()];
  try {
    return [...described, (await request.encode()).buffer];
  } catch (error) {
    return [...described, `${(error as Error).constructor.name}: ${(error as Error).message}`];
  }
}

describe('speedUpProduceRequest', () => {
  it('is the produce request kafkajs uses once walbox has loaded kafkajs', () => {
    assert.equal(typeof KafkaSink, 'function');
    assert.equal(speedUpProduceRequest(), 'installed');
    assert.equal(load(PRODUCE_V3), createProduceRequest);
    assert.notEqual(loadKafkajsProduceRequest(), createProduceRequest);
    // v4–v7, which current brokers negotiate, wrap the v3 they find when they load: walbox's.
    const v7 = load('kafkajs/src/protocol/requests/produce/v7/request') as ProduceRequestFactory;
    const args = makeRequests()[0] as ProduceRequestArgs;
    assert.equal(v7(args).apiVersion, 7);
  });

  for (const encoding of ['as kafkajs encodes', 'with walbox’s encoder patch'] as const) {
    it(`makes the very requests kafkajs 2.2.4 makes, or fails as it does (${encoding})`, async (t) => {
      if (encoding !== 'as kafkajs encodes') speedUpRecordEncoding();
      // Messages without a timestamp take the send time: the same for both.
      t.mock.method(Date, 'now', () => 1_764_000_000_500);
      const kafkajs = loadKafkajsProduceRequest();
      for (const [i, args] of makeRequests().entries()) {
        assert.deepEqual(
          await encodeWith(createProduceRequest, args),
          await encodeWith(kafkajs, args),
          `request ${i}`,
        );
      }
    });
  }

  it('writes records straight into the request, without a buffer for each', async (t) => {
    speedUpRecordEncoding();
    t.mock.method(Date, 'now', () => 1_764_000_000_500);
    const walboxShaped = makeRequests()[0] as ProduceRequestArgs;
    // The last record ends a byte after its header count: the encoder reserves more than that before writing.
    const tiny: ProduceMessage[] = Array.from({ length: 50 }, (_, i) => ({ value: `v${i}` }));
    tiny.push({ value: null, key: null, timestamp: '1764000000999' });
    const tinyTail: ProduceRequestArgs = {
      ...walboxShaped,
      topicData: [{ topic: 'o', partitions: [{ partition: 0, messages: tiny }] }],
    };
    for (const args of [walboxShaped, tinyTail]) {
      const allocations = t.mock.method(Buffer, 'allocUnsafe');
      const request = await createProduceRequest(args).encode();
      allocations.mock.restore();
      const records = (args.topicData[0]?.partitions[0]?.messages ?? []).length;
      assert.ok(records >= 50);
      assert.ok(
        allocations.mock.callCount() < 10,
        `${allocations.mock.callCount()} buffers for ${records} records`,
      );
      assert.deepEqual(request.buffer, (await loadKafkajsProduceRequest()(args).encode()).buffer);
    }
  });

  it('makes the request again, each record apart, when a record comes out short of its measured size', async (t) => {
    speedUpRecordEncoding();
    t.mock.method(Date, 'now', () => 1_764_000_000_500);
    const messages = makeMessages().slice(0, 20);
    const kafkajsArgs: ProduceRequestArgs = {
      acks: -1,
      timeout: 30_000,
      topicData: [{ topic: 'orders', partitions: [{ partition: 0, messages }] }],
    };
    // The eighth value's first copy writes nothing: the in-place request must not be sent.
    const value = Buffer.from('{"orderId":8}');
    const copyAll = value.copy.bind(value);
    let copies = 0;
    value.copy = (...args) => (++copies === 1 ? 0 : copyAll(...args));
    const walboxMessages = messages.map((message, i) => (i === 7 ? { ...message, value } : message));
    (messages[7] as ProduceMessage).value = Buffer.from(value);
    const walboxArgs: ProduceRequestArgs = {
      ...kafkajsArgs,
      topicData: [{ topic: 'orders', partitions: [{ partition: 0, messages: walboxMessages }] }],
    };
    assert.deepEqual(
      (await createProduceRequest(walboxArgs).encode()).buffer,
      (await loadKafkajsProduceRequest()(kafkajsArgs).encode()).buffer,
    );
    assert.equal(copies, 2);
  });
});
