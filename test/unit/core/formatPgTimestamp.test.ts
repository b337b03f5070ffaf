import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { toIsoTimestamp } from '../../../src/core/formatPgTimestamp.js';
import { parseUtcEventTime } from '../../../src/core/parseEventTime.js';

/** Texts of a few seconds, each with and without fractions and with other offsets, and texts kept unchanged. */
const TEXTS: readonly string[] = [
  '2026-12-02 12:37:28.1234+00',
  '2026-12-02 12:37:28+00',
  '2026-12-02 12:37:28.5+00',
  '2026-12-02 12:37:28.999999+00',
  '2026-12-02 12:37:28.000001+00',
  '2026-12-02 12:37:28.5+02',
  '2026-12-02 12:37:28.5-05:30',
  '2026-12-02 12:37:28.5+00:19:32',
  '2026-12-02 12:37:28.1234567+00',
  '2026-12-02 12:37:28.+00',
  '2026-12-02 12:37:28.5+00 BC',
  '2026-12-02 12:37:28.5Z+00',
  '2026-12-02 12:37:29.5+00',
  '2024-02-29 23:59:59.9-01',
  '2024-02-29 23:59:59-01',
  '2024-02-29 23:59:59.25+14',
  '0001-01-01 00:00:00.5+00',
  '0001-01-01 00:00:00.5+01',
  '9999-12-31 23:59:59.75+00',
  '9999-12-31 23:59:59.75-01',
  '2026-02-30 00:00:00.5+00',
  'infinity',
  '',
];

describe('toIsoTimestamp', () => {
  it('converts any offset to UTC with exactly six fractional digits', () => {
    const cases: readonly [string, string][] = [
      ['2026-12-02 12:37:28.1234+00', '2026-12-02T12:37:28.123400Z'],
      ['2026-12-02 14:37:28+02', '2026-12-02T12:37:28.000000Z'],
      ['2026-12-02 07:07:28.123456-05:30', '2026-12-02T12:37:28.123456Z'],
      ['2026-12-02 18:07:28.1+05:30', '2026-12-02T12:37:28.100000Z'],
      ['2026-12-02 09:07:28.1234-03:30', '2026-12-02T12:37:28.123400Z'],
      ['2026-12-03 02:37:28+14', '2026-12-02T12:37:28.000000Z'],
      // Local mean time: Amsterdam before 1937 printed with seconds in the offset.
      ['1900-01-01 00:19:32+00:19:32', '1900-01-01T00:00:00.000000Z'],
      ['2026-12-02 12:37:28.000001+00', '2026-12-02T12:37:28.000001Z'],
    ];
    for (const [pg, iso] of cases) assert.equal(toIsoTimestamp(pg), iso, pg);
  });

  it('carries across day, month, year and leap-day boundaries', () => {
    assert.equal(toIsoTimestamp('2000-01-01 00:59:59.999999+01'), '1999-12-31T23:59:59.999999Z');
    assert.equal(toIsoTimestamp('2024-02-29 23:30:00-01'), '2024-03-01T00:30:00.000000Z');
    assert.equal(toIsoTimestamp('2024-03-01 00:30:00+02'), '2024-02-29T22:30:00.000000Z');
    assert.equal(toIsoTimestamp('2100-03-01 00:00:00+00:00:01'), '2100-02-28T23:59:59.000000Z');
    assert.equal(toIsoTimestamp('0001-01-01 00:00:00+00'), '0001-01-01T00:00:00.000000Z');
    assert.equal(toIsoTimestamp('9999-12-31 23:59:59.999999+00'), '9999-12-31T23:59:59.999999Z');
  });

  it('agrees with Date on whole seconds over a range of instants', () => {
    for (let ms = -2_208_988_800_000; ms < 4_102_444_800_000; ms += 987_654_321_000) {
      const iso = new Date(ms).toISOString();
      const pg = `${iso.slice(0, 10)} ${iso.slice(11, 19)}+00`;
      assert.equal(toIsoTimestamp(pg), `${iso.slice(0, 19)}.000000Z`);
    }
  });

  it('returns what it cannot convert unchanged', () => {
    for (const text of [
      'infinity',
      '-infinity',
      '0044-03-15 12:00:00+00 BC',
      '12026-01-01 00:00:00+00',
      '0001-01-01 00:00:00+01',
      '02/12/2026 09:07:28.5 NST',
      'Wed Dec 02 12:37:28.5 2026 UTC',
      '2026-02-30 00:00:00+00',
      '2026-12-02 24:00:00+00',
      '2026-12-02 12:37:28.1234567+00',
      '2026-12-02T12:37:28Z',
      '',
    ])
      assert.equal(toIsoTimestamp(text), text);
  });

  it('gives the same text whether or not the text before it was of the same second', () => {
    // Each text after each other one (the shortcut taken or not), against the text converted after another second.
    const fresh = (text: string): string => {
      toIsoTimestamp('1999-01-01 00:00:00.5+00');
      return toIsoTimestamp(text);
    };
    for (const before of TEXTS) {
      for (const text of TEXTS) {
        toIsoTimestamp(before);
        assert.equal(toIsoTimestamp(text), fresh(text), `${text} after ${before}`);
      }
    }
    toIsoTimestamp('2026-12-02 14:37:28.1234+02');
    assert.equal(toIsoTimestamp('2026-12-02 14:37:28.5+02'), '2026-12-02T12:37:28.500000Z');
    assert.equal(toIsoTimestamp('2026-12-02 14:37:28+02'), '2026-12-02T12:37:28.000000Z');
    assert.equal(toIsoTimestamp('2026-12-02 14:37:28.12+02:30'), '2026-12-02T12:07:28.120000Z');
  });
});

describe('parseUtcEventTime', () => {
  it("reads toIsoTimestamp's output as Date.parse does, whatever the instant read before it", () => {
    const inputs = [
      ...TEXTS.map(toIsoTimestamp),
      '2026-12-02T12:37:28.123Z',
      '2026-12-02T12:37:28.1234567Z',
      '2026-12-02T12:37:28.12 456Z',
      '2026-12-02T12:37:28.-23456Z',
      '1969-12-31T23:59:59.500000Z',
      '1970-01-01T00:00:00.000999Z',
    ];
    const expected = (iso: string): number | undefined => {
      const ms = iso.endsWith('Z') ? Date.parse(iso) : NaN;
      return Number.isSafeInteger(ms) && ms >= 0 ? ms : undefined;
    };
    for (const before of inputs) {
      for (const iso of inputs) {
        parseUtcEventTime(before);
        assert.equal(parseUtcEventTime(iso), expected(iso), `${iso} after ${before}`);
      }
    }
    parseUtcEventTime('2026-12-02T12:37:28.100000Z');
    assert.equal(parseUtcEventTime('2026-12-02T12:37:28.999999Z'), Date.UTC(2026, 11, 2, 12, 37, 28, 999));
  });
});
