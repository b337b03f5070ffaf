import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { describe, it } from 'node:test';

import type { IHeaders, KafkaMessage } from 'kafkajs';

import { toConsumedEvent } from '../../../src/consumer/toConsumedEvent.js';
import type { OutboxRecord } from '../../../src/core/outboxRecord.js';
import { WalboxError } from '../../../src/errors.js';
import { toKafkaMessage } from '../../../src/sink/kafka/toKafkaMessage.js';

const PAYLOAD = '{"big": 12345678901234567890, "total": 42}';
const record: OutboxRecord = {
  id: '6f1c0c1e-0000-4000-8000-000000000001',
  aggregateType: 'order',
  aggregateId: 'o-1',
  eventType: 'order.created',
  payload: PAYLOAD,
  headers: '{"traceparent": "00-abc-01", "n": 7}',
  createdAt: '2026-12-02T12:37:28.123400Z',
  seq: '1',
};

/**
 * The message as a kafkajs consumer receives it: values and headers as Buffers, the headers as own properties
 * (kafkajs builds them with computed keys, so a `__proto__` header is an own property too).
 */
function received(headers: IHeaders, value: string | null = PAYLOAD): KafkaMessage {
  const encoded: IHeaders = Object.fromEntries(
    Object.entries(headers).map(([name, v]) => [
      name,
      Array.isArray(v) ? v.map((x) => Buffer.from(x)) : v === undefined ? v : Buffer.from(v),
    ]),
  );
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
      payload: JSON.parse(PAYLOAD) as unknown,
      payloadJson: PAYLOAD,
      headers: Object.assign(Object.create(null) as object, produced, { traceparent: '00-abc-01', n: '7' }),
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

  it('keeps __proto__ and constructor as ordinary headers, in a map without a prototype', () => {
    const event = decode(received(Object.fromEntries([...Object.entries(produced), ['__proto__', 'p']])));
    assert.equal(Object.getPrototypeOf(event.headers), null);
    assert.equal(event.headers['__proto__'], 'p');
    assert.equal(event.headers['constructor'], undefined, 'no inherited names');
  });

  it('treats a null header value as absent instead of throwing', () => {
    const message = received(produced);
    const headers = message.headers as Record<string, unknown>;
    headers['tenant'] = null;
    headers['baggage'] = [Buffer.from('a=1'), null];
    headers['region'] = [null, Buffer.from('eu')];
    const event = decode(message);
    assert.equal('tenant' in event.headers, false);
    assert.equal(event.headers['baggage'], 'a=1', 'the last value that carries one');
    assert.equal(event.headers['region'], 'eu');
    assert.equal(event.id, record.id);
  });

  it('refuses a reserved header that is null as missing, with a DECODE_FAILED error', () => {
    const message = received(produced);
    (message.headers as Record<string, unknown>)['id'] = null;
    rejectsWith(message, /has no id header: not a walbox event/);
    const repeated = received(produced);
    (repeated.headers as Record<string, unknown>)['id'] = [null, Buffer.from(record.id)];
    assert.equal(decode(repeated).id, record.id, 'a null beside the id is no second id');
  });
});

/** kafkajs 2.2.4's own record encoding and decoding (no types: internal modules). */
interface KafkajsRecordCodec {
  encodeRecord(record: { key: Buffer; value: Buffer; headers: Record<string, unknown> }): { buffer: Buffer };
  encodeHeader(header: { key: string; value: Buffer | string | null }): object;
  newEncoder(): KafkajsEncoder;
  decodeRecord(buffer: Buffer): KafkaMessage;
}
interface KafkajsEncoder {
  writeInt8(value: number): KafkajsEncoder;
  writeVarLong(value: number): KafkajsEncoder;
  writeVarInt(value: number): KafkajsEncoder;
  writeVarIntBytes(value: Buffer): KafkajsEncoder;
  writeVarIntArray(items: object[]): KafkajsEncoder;
  buffer: Buffer;
}

function loadKafkajsCodec(): KafkajsRecordCodec {
  const load = createRequire(__filename);
  const Encoder = load('kafkajs/src/protocol/encoder') as new () => KafkajsEncoder;
  const Decoder = load('kafkajs/src/protocol/decoder') as new (buffer: Buffer) => {
    readVarIntBytes(): Buffer;
  };
  const Record = load('kafkajs/src/protocol/recordBatch/record/v0') as KafkajsRecordCodec['encodeRecord'];
  const Header = load('kafkajs/src/protocol/recordBatch/header/v0') as KafkajsRecordCodec['encodeHeader'];
  const RecordDecoder = load('kafkajs/src/protocol/recordBatch/record/v0/decoder') as (
    decoder: unknown,
    context: object,
  ) => KafkaMessage;
  return {
    encodeRecord: Record,
    encodeHeader: Header,
    newEncoder: () => new Encoder(),
    decodeRecord: (buffer) => RecordDecoder(new Decoder(buffer), { firstOffset: '17', firstTimestamp: '0' }),
  };
}

describe('headers through kafkajs’s own wire encoding', () => {
  const kafkajs = loadKafkajsCodec();

  it('round-trips the relay’s headers, __proto__ included', () => {
    const message = toKafkaMessage({
      ...record,
      headers: '{"__proto__": "p", "constructor": "c", "gone": null}',
    });
    const { buffer } = kafkajs.encodeRecord({
      key: Buffer.from(record.aggregateId),
      value: Buffer.from(PAYLOAD),
      headers: message.headers ?? {},
    });
    const body = buffer.subarray(varIntLength(buffer));
    const event = decode(kafkajs.decodeRecord(body));
    assert.equal(event.headers['__proto__'], 'p');
    assert.equal(event.headers['constructor'], 'c');
    assert.equal('gone' in event.headers, false);
    assert.equal(event.id, record.id);
  });

  it('cannot produce a null header value (why the relay leaves JSON null out), but decodes one as null', () => {
    assert.throws(
      () => kafkajs.encodeRecord({ key: Buffer.from('k'), value: Buffer.from('v'), headers: { h: null } }),
      TypeError,
    );
    // A record as another producer (the Java client) may write it: header values of length -1.
    const body = kafkajs
      .newEncoder()
      .writeInt8(0)
      .writeVarLong(0)
      .writeVarInt(0)
      .writeVarIntBytes(Buffer.from(record.aggregateId))
      .writeVarIntBytes(Buffer.from(PAYLOAD))
      .writeVarIntArray([
        ...Object.entries(produced).map(([key, value]) => kafkajs.encodeHeader({ key, value })),
        kafkajs.encodeHeader({ key: 'tenant', value: null }),
      ]).buffer;
    const decoded = kafkajs.decodeRecord(body);
    assert.equal((decoded.headers as Record<string, unknown>)['tenant'], null);
    const event = decode(decoded);
    assert.equal('tenant' in event.headers, false);
  });
});

/** Bytes taken by the zigzag varint at the start of `buffer` (kafkajs prefixes a record with its length). */
function varIntLength(buffer: Buffer): number {
  let i = 0;
  while (i < buffer.length && ((buffer[i] ?? 0) & 0x80) !== 0) i++;
  return i + 1;
}
