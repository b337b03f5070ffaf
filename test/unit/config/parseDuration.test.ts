import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { formatDuration, parseDuration } from '../../../src/config/parseDuration.js';

describe('parseDuration', () => {
  it('reads units and treats a bare number as milliseconds', () => {
    assert.equal(parseDuration('250'), 250);
    assert.equal(parseDuration('250ms'), 250);
    assert.equal(parseDuration('1s'), 1_000);
    assert.equal(parseDuration('2.5s'), 2_500);
    assert.equal(parseDuration('5m'), 300_000);
    assert.equal(parseDuration('1h'), 3_600_000);
    assert.equal(parseDuration('7d'), 604_800_000);
  });

  it('rejects what is not a duration', () => {
    for (const text of ['', 's', '-1s', '1 week', '1e3', 'soon'])
      assert.equal(parseDuration(text), undefined, text);
  });

  it('formats defaults back in the largest whole unit', () => {
    assert.equal(formatDuration(300_000), '5m');
    assert.equal(formatDuration(1_000), '1s');
    assert.equal(formatDuration(1_500), '1500ms');
  });
});
