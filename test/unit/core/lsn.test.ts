import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { compareLsn, formatLsn, parseLsn } from '../../../src/core/lsn.js';

describe('parseLsn', () => {
  it('reads the unpadded and the padded form to the same value', () => {
    assert.equal(parseLsn('0/1533368'), 0x1533368n);
    assert.equal(parseLsn('00000000/01533368'), 0x1533368n);
    assert.equal(parseLsn('16/B374D848'), (0x16n << 32n) | 0xb374d848n);
    assert.equal(parseLsn('16/b374d848'), parseLsn('00000016/B374D848'));
    assert.equal(parseLsn('0/0'), 0n);
    assert.equal(parseLsn('FFFFFFFF/FFFFFFFF'), (1n << 64n) - 1n);
  });

  it('throws on anything else', () => {
    for (const text of [
      '',
      '0',
      '0/',
      '/1',
      '1/2/3',
      'g/1',
      '123456789/0',
      '0/123456789',
      ' 0/1',
      '0/1 ',
      '0x0/1',
      '-1/0',
    ])
      assert.throws(() => parseLsn(text), /not an LSN/, JSON.stringify(text));
  });
});

describe('formatLsn', () => {
  it('prints upper-case unpadded halves as PostgreSQL does', () => {
    assert.equal(formatLsn(0x1533368n), '0/1533368');
    assert.equal(formatLsn((0x16n << 32n) | 0xb374d848n), '16/B374D848');
    assert.equal(formatLsn(0n), '0/0');
    assert.equal(formatLsn(1n << 32n), '1/0');
    assert.equal(formatLsn(parseLsn('00000000/01533368')), '0/1533368');
  });

  it('refuses values outside 64 bits', () => {
    assert.throws(() => formatLsn(-1n), RangeError);
    assert.throws(() => formatLsn(1n << 64n), RangeError);
  });
});

describe('compareLsn', () => {
  it('orders numerically, unlike the strings', () => {
    const a = parseLsn('0/9000000');
    const b = parseLsn('0/10000000');
    assert.equal(compareLsn(a, b), -1);
    assert.equal(compareLsn(b, a), 1);
    assert.equal(compareLsn(a, parseLsn('00000000/09000000')), 0);
    assert.deepEqual([b, a].sort(compareLsn), [a, b]);
  });
});
