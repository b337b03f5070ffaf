import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import Encoder from 'kafkajs/src/protocol/encoder';
import produceRequest from 'kafkajs/src/protocol/requests/produce/v3/request';

import { speedUpRecordEncoding } from '../../../../src/sink/kafka/speedUpRecordEncoding.js';

type Messages = Parameters<typeof produceRequest>[0]['topicData'][number]['partitions'][number]['messages'];

function walboxLike(count: number, valueBytes: number, firstTimestamp: number): Messages {
  return Array.from({ length: count }, (_, i) => ({
    key: Buffer.from(`order-${i % 7}`),
    value: Buffer.alloc(valueBytes, 97 + (i % 26)),
    timestamp: String(firstTimestamp + ((i * 37) % 1000)),
    headers: {
      'event-id': `0190c8a2-7c1e-7d3a-9f00-${String(i).padStart(12, '0')}`,
      'event-type': 'OrderCreated',
      'aggregate-type': 'order',
      'aggregate-id': `order-${i % 7}`,
      'walbox-lsn': `0/${(0x16b3f08 + i).toString(16).toUpperCase()}`,
    },
  }));
}

const REQUESTS: Messages[] = [
  walboxLike(200, 60, 1_764_000_000_000),
  walboxLike(3, 8 * 1024, 1_764_000_000_000),
  walboxLike(2, 70 * 1024, 1_764_000_000_000),
  [
    { key: null, value: null, timestamp: 5 },
    {
      key: 'ключ',
      value: 'zażółć gęślą jaźń \u{1F600}',
      timestamp: 4,
      headers: { multi: ['a', Buffer.from('b')] },
    },
    // kafkajs sorts timestamps as strings, so '1000' comes first and most deltas here are negative.
    { value: Buffer.alloc(0), timestamp: '999', headers: { empty: '' } },
    { value: 'x', timestamp: '1000' },
    { value: 'big delta', timestamp: 2 ** 45 },
  ],
];

const VARINTS = [
  0,
  1,
  -1,
  63,
  64,
  -64,
  -65,
  127,
  128,
  16_383,
  16_384,
  2 ** 31 - 1,
  -(2 ** 31),
  2 ** 32 + 5,
  -7.5,
];
const VARLONGS: (number | bigint | string)[] = [
  0,
  -0,
  1,
  -1,
  63,
  64,
  -65,
  2 ** 31,
  -(2 ** 35),
  2 ** 51,
  -(2 ** 51),
  2 ** 51 + 1,
  -(2 ** 52),
  2 ** 53 + 2,
  Number.MAX_SAFE_INTEGER,
  NaN,
  2n ** 62n,
  -(2n ** 60n),
  '123456789',
];

/** Integers of every magnitude up to 2^bits, both signs; seeded, so that a failure repeats. */
function spreadIntegers(count: number, bits: number): number[] {
  let state = 0x9e3779b9;
  const next = (): number => {
    state = (Math.imul(state, 1_664_525) + 1_013_904_223) >>> 0;
    return state / 2 ** 32;
  };
  return Array.from({ length: count }, () => {
    const magnitude = Math.floor(next() * 2 ** Math.floor(next() * bits));
    return next() < 0.5 ? -magnitude : magnitude;
  });
}

const SPREAD_VARINTS = spreadIntegers(2_000, 32);
const SPREAD_VARLONGS = spreadIntegers(2_000, 53);

async function encodeAll(): Promise<Buffer[]> {
  const encoded: Buffer[] = [];
  for (const messages of REQUESTS) {
    const request = produceRequest({
      acks: -1,
      timeout: 30_000,
      topicData: [{ topic: 'orders', partitions: [{ partition: 0, messages }] }],
    });
    encoded.push((await request.encode()).buffer);
  }
  for (const value of [...VARINTS, ...SPREAD_VARINTS]) encoded.push(new Encoder().writeVarInt(value).buffer);
  for (const value of [...VARLONGS, ...SPREAD_VARLONGS]) {
    encoded.push(new Encoder().writeVarLong(value).buffer);
    encoded.push(Buffer.from([Encoder.sizeOfVarLong(value)]));
  }
  return encoded;
}

describe('speedUpRecordEncoding', () => {
  it('encodes produce requests, varints and varlongs to the very bytes unpatched kafkajs does', async () => {
    const before = await encodeAll();
    speedUpRecordEncoding();
    speedUpRecordEncoding();
    const after = await encodeAll();
    assert.equal(after.length, before.length);
    for (const [i, bytes] of after.entries()) assert.deepEqual(bytes, before[i], `encoding ${i} differs`);
  });

  it('starts every Encoder empty instead of with 512 zeroed bytes of its own', () => {
    speedUpRecordEncoding();
    assert.equal(new Encoder().buf.length, 0);
    const encoder = new Encoder().writeVarInt(300);
    assert.deepEqual(encoder.buffer, Buffer.from([0xd8, 0x04]));
  });

  it('patches once however often it is called', () => {
    speedUpRecordEncoding();
    const patched = [
      Encoder.prototype.writeVarLong,
      Encoder.sizeOfVarLong,
      Encoder.prototype.ensureAvailable,
    ];
    speedUpRecordEncoding();
    assert.deepEqual(
      [Encoder.prototype.writeVarLong, Encoder.sizeOfVarLong, Encoder.prototype.ensureAvailable],
      patched,
    );
  });

  it('still refuses what kafkajs refuses: a fractional varlong', () => {
    speedUpRecordEncoding();
    assert.throws(() => new Encoder().writeVarLong(1.5), RangeError);
  });
});
