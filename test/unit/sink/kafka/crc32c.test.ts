import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import kafkajsCrc32C from 'kafkajs/src/protocol/recordBatch/crc32C';

import { crc32c } from '../../../../src/sink/kafka/crc32c.js';

/** Bytes that are not a pattern a wrong table could still get right: a multiplicative hash of the index. */
function makeBytes(length: number): Buffer {
  const bytes = Buffer.alloc(length);
  for (let i = 0; i < length; i++) bytes[i] = Math.imul(i + 1, 2_654_435_761) >>> 24;
  return bytes;
}

describe('crc32c', () => {
  it('gives the published CRC-32C check values (RFC 3720, B.4, and the "123456789" check)', () => {
    assert.equal(crc32c(Buffer.from('123456789')), 0xe3069283);
    assert.equal(crc32c(Buffer.alloc(32, 0x00)), 0x8a9136aa);
    assert.equal(crc32c(Buffer.alloc(32, 0xff)), 0x62a8ab43);
    assert.equal(crc32c(Buffer.from(Array.from({ length: 32 }, (_, i) => i))), 0x46dd794e);
    assert.equal(crc32c(Buffer.from(Array.from({ length: 32 }, (_, i) => 31 - i))), 0x113fdb5c);
    assert.equal(crc32c(Buffer.alloc(0)), 0);
  });

  it('agrees with kafkajs 2.2.4 at every length around its eight-byte steps, at any offset', () => {
    const source = makeBytes(300);
    for (let start = 0; start < 9; start++) {
      for (let length = 0; start + length <= 200; length++) {
        const bytes = source.subarray(start, start + length);
        assert.equal(crc32c(bytes), kafkajsCrc32C(bytes), `${length} bytes from ${start}`);
      }
    }
  });

  it('agrees with kafkajs 2.2.4 on a produce request of 8 KB records', () => {
    const bytes = makeBytes(943_001);
    assert.equal(crc32c(bytes), kafkajsCrc32C(bytes));
  });
});
