import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { DecodeError } from '../../../../src/source/wal/pgoutput/decodeError.js';
import {
  buildStandbyStatusUpdate,
  parseXLogHeader,
} from '../../../../src/source/wal/pgoutput/standbyStatus.js';
import { buildBegin, buildKeepalive, buildXLogData } from '../../../support/pgoutputBuffers.js';

describe('buildStandbyStatusUpdate', () => {
  it('confirms the LSN exactly in write, flush and apply', () => {
    const lsn = 0x16_b374_d848n;
    const message = buildStandbyStatusUpdate(lsn, new Date('2000-01-01T00:00:00Z'));
    assert.equal(message.length, 34);
    assert.equal(String.fromCharCode(message[0] ?? 0), 'r');
    assert.equal(message.readBigUInt64BE(1), lsn);
    assert.equal(message.readBigUInt64BE(9), lsn);
    assert.equal(message.readBigUInt64BE(17), lsn);
    assert.equal(message.readBigInt64BE(25), 0n);
    assert.equal(message[33], 0);
  });

  it('sends the clock in microseconds since 2000-01-01 UTC', () => {
    const clockOf = (iso: string): bigint => buildStandbyStatusUpdate(1n, new Date(iso)).readBigInt64BE(25);
    assert.equal(clockOf('2000-01-02T00:00:00.001Z'), 86_400_001_000n);
    // 26 years of 365 days plus 7 leap days (2000, 2004, ..., 2024), to 2026-01-01.
    assert.equal(clockOf('2026-01-01T00:00:00Z'), BigInt(26 * 365 + 7) * 86_400_000_000n);
    assert.equal(clockOf('1999-12-31T23:59:59Z'), -1_000_000n);
  });

  it('sets the reply flag on request', () => {
    assert.equal(buildStandbyStatusUpdate(0n, new Date(), true)[33], 1);
  });

  it('refuses LSNs outside 64 bits and invalid dates', () => {
    assert.throws(() => buildStandbyStatusUpdate(-1n, new Date()), RangeError);
    assert.throws(() => buildStandbyStatusUpdate(1n << 64n, new Date()), RangeError);
    assert.throws(() => buildStandbyStatusUpdate(1n, new Date(Number.NaN)), RangeError);
  });
});

describe('parseXLogHeader', () => {
  it('splits XLogData into its header and a copy of the pgoutput message', () => {
    const payload = buildBegin(100n, 200n, 7);
    const chunk = buildXLogData(0x1_0000_0000n, 0x2_0000_0000n, 12_345n, payload);
    const header = parseXLogHeader(chunk);
    assert.deepEqual(header, {
      kind: 'xlogdata',
      dataStart: 0x1_0000_0000n,
      walEnd: 0x2_0000_0000n,
      sendTime: 12_345n,
      payload,
    });
    // The socket parser reuses its buffer: the payload must survive that.
    chunk.fill(0);
    assert.deepEqual(header.payload, payload);
  });

  it('reads primary keepalives', () => {
    assert.deepEqual(parseXLogHeader(buildKeepalive(0x1533368n, 99n, true)), {
      kind: 'keepalive',
      walEnd: 0x1533368n,
      sendTime: 99n,
      replyRequested: true,
    });
    assert.deepEqual(parseXLogHeader(buildKeepalive(1n, 1n, false)), {
      kind: 'keepalive',
      walEnd: 1n,
      sendTime: 1n,
      replyRequested: false,
    });
  });

  it('passes other messages through and rejects truncated ones', () => {
    assert.deepEqual(parseXLogHeader(Buffer.from('x')), { kind: 'other', byte: 0x78 });
    const truncated = [
      Buffer.alloc(0),
      buildXLogData(1n, 2n, 3n, Buffer.alloc(0)).subarray(0, 24),
      buildKeepalive(1n, 2n, true).subarray(0, 17),
    ];
    for (const chunk of truncated) assert.throws(() => parseXLogHeader(chunk), DecodeError);
  });
});

describe('buildStandbyStatusUpdate with a received position', () => {
  it('reports what was received as write, and never less than flush', () => {
    const message = buildStandbyStatusUpdate(0x100n, new Date('2026-01-01T00:00:00Z'), false, 0x500n);
    assert.equal(message.readBigUInt64BE(1), 0x500n, 'write = received');
    assert.equal(message.readBigUInt64BE(9), 0x100n, 'flush = confirmed');
    assert.equal(message.readBigUInt64BE(17), 0x100n, 'apply = confirmed');
    const behind = buildStandbyStatusUpdate(0x100n, new Date('2026-01-01T00:00:00Z'), false, 0x50n);
    assert.equal(behind.readBigUInt64BE(1), 0x100n);
  });
});
