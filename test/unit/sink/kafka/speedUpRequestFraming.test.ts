import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { describe, it } from 'node:test';

import Encoder from 'kafkajs/src/protocol/encoder';
import type createRequest from 'kafkajs/src/protocol/request';
import type { RequestFrameArgs } from 'kafkajs/src/protocol/request';
import type { ProduceMessage } from 'kafkajs/src/protocol/requests/produce/v3/request';
import Long from 'kafkajs/src/utils/long';

// Loads kafkajs as the relay does: through src/sink/kafka/kafkajs.ts.
import { KafkaSink } from '../../../../src/sink/kafka/kafkaSink.js';
import { createProduceRequest } from '../../../../src/sink/kafka/speedUpProduceRequest.js';
import { frameRequest, speedUpRequestFraming } from '../../../../src/sink/kafka/speedUpRequestFraming.js';
import { makeRecordCases, PLAIN_CASES } from '../../../support/kafkaRecordCases.js';
import { loadKafkajsAfresh } from '../../../support/loadKafkajsAfresh.js';

const load = createRequire(__filename);
const REQUEST = load.resolve('kafkajs/src/protocol/request');
type RequestFraming = typeof createRequest;

/** Produce requests with small and 8 KB records, as the relay sends them. */
function makeProduceEncoders(): RequestFrameArgs['request']['encode'][] {
  const messages = makeRecordCases()
    .slice(0, PLAIN_CASES)
    .map((args) => ({ key: args.key, value: args.value, headers: args.headers }) as ProduceMessage);
  const big = Buffer.alloc(8_192, 'x');
  return [
    messages.slice(0, 200),
    messages.slice(0, 1),
    [],
    Array.from({ length: 120 }, (_, i) => ({ key: `agg-${String(i)}`, value: big })),
  ].map(
    (batch) => () =>
      createProduceRequest({
        acks: -1,
        timeout: 30_000,
        producerId: Long.fromInt(7),
        topicData: [{ topic: 'orders', partitions: [{ partition: 3, messages: batch }] }],
      }).encode(),
  );
}

/** Frames of every shape: produce requests, an empty body, client ids null, empty and not ASCII, odd bodies. */
function makeFrames(): RequestFrameArgs[] {
  const encoders: RequestFrameArgs['request']['encode'][] = [
    ...makeProduceEncoders(),
    () => Promise.resolve(new Encoder()),
    () => Promise.resolve(new Encoder().writeString('metadata').writeInt32(-1)),
    // Not an Encoder: kafkajs refuses it.
    () => Promise.resolve({}),
    () => Promise.resolve(null),
    () => Promise.reject(new Error('encoding failed')),
  ];
  const frames: RequestFrameArgs[] = [];
  for (const [i, encode] of encoders.entries()) {
    for (const clientId of ['walbox', null, '', 'zamówienia-relay']) {
      frames.push({ correlationId: i * 1_000 + 17, clientId, request: { apiKey: 0, apiVersion: 7, encode } });
    }
  }
  // An api key out of range: kafkajs's encoder refuses it before it looks at the body.
  frames.push({
    correlationId: 1,
    clientId: 'walbox',
    request: { apiKey: 70_000, apiVersion: 0, encode: () => Promise.resolve({}) },
  });
  return frames;
}

/** A framing's bytes, or the error it fails with. */
async function frameWith(framing: RequestFraming, args: RequestFrameArgs): Promise<unknown> {
  try {
    const framed = await framing(args);
    return [framed.buffer, framed.size()];
  } catch (error) {
    return `${(error as Error).constructor.name}: ${(error as Error).message}`;
  }
}

/** Whether the frame's bytes end where the request's do, in the same memory: framed without a copy. */
function isFramedInPlace(frame: Encoder, payload: Encoder): boolean {
  return (
    frame.buf.buffer === payload.buf.buffer &&
    frame.buf.byteOffset + frame.offset === payload.buf.byteOffset + payload.offset
  );
}

describe('speedUpRequestFraming', () => {
  it('is the framing kafkajs uses once walbox has loaded kafkajs', () => {
    assert.equal(typeof KafkaSink, 'function');
    assert.equal(speedUpRequestFraming(), 'installed');
    assert.equal(load(REQUEST), frameRequest);
    assert.notEqual(loadKafkajsAfresh(REQUEST), frameRequest);
  });

  it('frames every request as kafkajs 2.2.4 does, or fails as it does', async (t) => {
    // Records without a timestamp take the send time: the same for both.
    t.mock.method(Date, 'now', () => 1_764_000_000_500);
    const kafkajs = loadKafkajsAfresh(REQUEST) as RequestFraming;
    for (const [i, args] of makeFrames().entries()) {
      assert.deepEqual(await frameWith(frameRequest, args), await frameWith(kafkajs, args), `frame ${i}`);
    }
  });

  it('frames a produce request in its room once, and copies it for a second frame', async () => {
    const kafkajs = loadKafkajsAfresh(REQUEST) as RequestFraming;
    for (const encode of makeProduceEncoders()) {
      const payload = (await encode()) as Encoder;
      const frame = (correlationId: number): RequestFrameArgs => ({
        correlationId,
        clientId: 'walbox',
        request: { apiKey: 0, apiVersion: 7, encode: () => Promise.resolve(payload) },
      });
      const first = await frameRequest(frame(41));
      const firstBytes = Buffer.from(first.buffer);
      assert.ok(isFramedInPlace(first, payload), 'the first frame is around the request bytes');
      const second = await frameRequest(frame(42));
      assert.ok(!isFramedInPlace(second, payload), 'the second frame is a copy');
      assert.deepEqual(first.buffer, firstBytes, 'the second frame leaves the first as it was');
      assert.deepEqual(first.buffer, (await kafkajs(frame(41))).buffer);
      assert.deepEqual(second.buffer, (await kafkajs(frame(42))).buffer);
    }
  });

  it('copies a produce request whose client id is too long for the room, as kafkajs frames it', async () => {
    const kafkajs = loadKafkajsAfresh(REQUEST) as RequestFraming;
    const [encode] = makeProduceEncoders();
    assert.ok(encode);
    const payload = (await encode()) as Encoder;
    const args: RequestFrameArgs = {
      correlationId: 5,
      clientId: 'r'.repeat(300),
      request: { apiKey: 0, apiVersion: 7, encode: () => Promise.resolve(payload) },
    };
    const framed = await frameRequest(args);
    assert.ok(!isFramedInPlace(framed, payload));
    assert.deepEqual(framed.buffer, (await kafkajs(args)).buffer);
  });
});
