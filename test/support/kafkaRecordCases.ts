import assert from 'node:assert/strict';

import type { RecordArgs } from 'kafkajs/src/protocol/recordBatch/record/v0';

/** Seeded, so that a failure repeats. */
function makeRandom(seed: number): (below: number) => number {
  let state = seed;
  return (below) => {
    state = (Math.imul(state, 1_664_525) + 1_013_904_223) >>> 0;
    return Math.floor((state / 2 ** 32) * below);
  };
}

const TEXTS = [
  '',
  'a',
  'order-42',
  'ключ',
  'zażółć gęślą jaźń',
  '訂單\u{1F600}',
  'lone \ud800 surrogate \udfff',
  'x'.repeat(63),
  'y'.repeat(64),
  'z'.repeat(8_191),
  'é'.repeat(9_000),
];

function pickBytes(random: (below: number) => number): string | Buffer {
  const text = TEXTS[random(TEXTS.length)] as string;
  return random(2) === 0 ? text : Buffer.from(text);
}

/** How many of the cases have only strings, Buffers and nulls (the first ones). */
export const PLAIN_CASES = 2_309;

export function range(from: number, to: number): number[] {
  return Array.from({ length: to - from }, (_, i) => from + i);
}

/** Records such as walbox sends, and every other shape kafkajs accepts or refuses. */
export function makeRecordCases(): RecordArgs[] {
  const random = makeRandom(0x5eed);
  const walbox = (i: number): RecordArgs => ({
    offsetDelta: i,
    timestampDelta: (i * 37) % 1_000,
    key: `order-${i % 7}`,
    value: Buffer.from(JSON.stringify({ orderId: i, total: 12.5 })),
    headers: {
      id: `0190c8a2-7c1e-7d3a-9f00-${String(i).padStart(12, '0')}`,
      aggregate_type: 'order',
      aggregate_id: `order-${i % 7}`,
      event_type: 'OrderPlaced',
      created_at: '2026-12-06T05:00:00.123456Z',
    },
  });
  const cases: RecordArgs[] = Array.from({ length: 300 }, (_, i) => walbox(i));
  for (let i = 0; i < 2_000; i++) {
    const headers: Record<string, string | Buffer> = {};
    for (let h = random(8); h > 0; h--) headers[`${TEXTS[random(6)] as string}-${h}`] = pickBytes(random);
    cases.push({
      offsetDelta: random(3) === 0 ? random(2 ** 20) : random(300),
      timestampDelta: random(2) === 0 ? random(2_000) - 1_000 : random(2 ** 30) * 2 ** 14 - 2 ** 43,
      key: random(5) === 0 ? null : pickBytes(random),
      value: random(7) === 0 ? null : pickBytes(random),
      headers,
    });
  }
  cases.push(
    {},
    { value: 'no key, no headers, no deltas' },
    { key: undefined, value: undefined, headers: undefined },
    { key: 'k', value: 'v', timestampDelta: 2 ** 53 + 2 },
    { key: 'k', value: 'v', timestampDelta: Number.NaN },
    { key: 'k', value: 'v', timestampDelta: 1.5 },
    { key: 'k', value: 'v', offsetDelta: -3 },
    { key: 'k', value: 'v', headers: ['an array', 'is an object too'] },
    { key: 'k', value: Buffer.alloc(70 * 1024, 1), headers: { big: Buffer.alloc(20_000, 2) } },
  );
  assert.equal(cases.length, PLAIN_CASES);
  // What goes to kafkajs's own encoder: header arrays, null or undefined header values, other types.
  cases.push(
    { key: 'k', value: 'v', headers: { multi: ['a', Buffer.from('b')], single: 'c' } },
    { key: 'k', value: 'v', headers: { empty: [] } },
    { key: 'k', value: 'v', headers: { nothing: null } },
    { key: 'k', value: 'v', headers: { missing: undefined } },
    { key: 42, value: 'v' },
    { key: 'k', value: 7 },
    { key: 'k', value: new Uint8Array([1, 2, 3]) },
    { key: 'k', value: 'v', headers: null },
    { key: 'k', value: 'v', headers: 'abc' },
  );
  return cases;
}
