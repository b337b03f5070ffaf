import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { IHeaders, KafkaMessage } from 'kafkajs';

import { toConsumedEvent } from '../../../src/consumer/toConsumedEvent.js';
import type { OutboxRecord } from '../../../src/core/outboxRecord.js';
import { WalboxError } from '../../../src/errors.js';
import { toKafkaMessage } from '../../../src/sink/kafka/toKafkaMessage.js';

const record: OutboxRecord = {
  id: '6f1c0c1e-0000-4000-8000-000000000001',
  aggregateType: 'order',
  aggregateId: 'o-1',
  eventType: 'order.created',
  payload: '{"big": 12345678901234567890, "total": 42}',
  headers: '{"traceparent": "00-abc-01", "n": 7}',
  createdAt: '2026-12-02T12:37:28.123400Z',
  seq: '1',
};

/** The message as a kafkajs consumer receives it: values and headers as Buffers. */
function received(headers: IHeaders, value: string | null = record.payload): KafkaMessage {
  const encoded: IHeaders = {};
  for (const [name, v] of Object.entries(headers)) {
    encoded[name] = Array.isArray(v) ? v.map((x) => Buffer.from(x)) : v === undefined ? v : Buffer.from(v);
  }
  return {
    key: Buffer.from(record.aggregateId),
    value: value === null ? null : Buffer.from(value),
    timestamp: '0',
    attributes: 0,
    offset: '17',
    headers: encoded,
  };
}

function decode(message: KafkaMessage) {
  return toConsumedEvent({ topic: 'outbox.order', partition: 2, message });
}

const produced = (toKafkaMessage(record).headers ?? {}) as Record<string, string>;

function without(...names: string[]): IHeaders {
  return Object.fromEntries(Object.entries(produced).filter(([name]) => !names.includes(name)));
}

function rejectsWith(message: KafkaMessage, pattern: RegExp): void {
  assert.throws(
    () => decode(message),
    (error: unknown) =>
      error instanceof WalboxError &&
      error.code === 'DECODE_FAILED' &&
      !error.retriable &&
      pattern.test(error.message),
  );
}

describe('toConsumedEvent', () => {
  it('decodes exactly what the relay produces (toKafkaMessage)', () => {
    const event = decode(received(produced));
    assert.deepEqual(event, {
      id: record.id,
      eventType: 'order.created',
      aggregateType: 'order',
      aggregateId: 'o-1',
      createdAt: '2026-12-02T12:37:28.123400Z',
      payload: JSON.parse(record.payload) as unknown,
      payloadJson: record.payload,
      headers: { ...produced, traceparent: '00-abc-01', n: '7' },
    });
    assert.match(event.payloadJson, /12345678901234567890/, 'the exact text, for numbers JSON.parse rounds');
  });

  it('refuses a message without an id header, saying where it is and why the id matters', () => {
    rejectsWith(
      received(without('id')),
      /^message at outbox\.order partition 2 offset 17 has no id header: not a walbox event .*deduplication/,
    );
    rejectsWith(received(without('created_at', 'event_type')), /has no event_type, created_at headers/);
  });

  it('refuses an id that is not a UUID, a repeated id, no value and a value that is not JSON', () => {
    rejectsWith(received({ ...produced, id: 'o-1' }), /the id header "o-1" is not a UUID/);
    rejectsWith(received({ ...produced, id: [record.id, record.id] }), /the id header appears 2 times/);
    rejectsWith(received(produced, null), /has no value/);
    rejectsWith(received(produced, '{"a":'), /the value is not JSON/);
  });

  it('keeps the last value of a repeated non-reserved header', () => {
    const event = decode(received({ ...produced, baggage: ['a=1', 'a=2'] }));
    assert.equal(event.headers['baggage'], 'a=2');
  });
});
