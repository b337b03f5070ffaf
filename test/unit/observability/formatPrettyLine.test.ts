import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { formatPrettyLine } from '../../../src/observability/formatPrettyLine.js';

describe('formatPrettyLine', () => {
  it('shows time, level, message and the fields, without the noise', () => {
    const line = JSON.stringify({
      level: 'warn',
      time: '2026-12-02T15:04:05.123Z',
      service: 'walbox',
      pid: 1,
      hostname: 'h',
      msg: 'publish failed; retrying',
      event_id: 'e-1',
      attempt: 2,
      err: { type: 'SinkError', message: 'broker down', stack: 'at …' },
    });
    assert.equal(
      formatPrettyLine(line),
      '15:04:05.123 WARN  publish failed; retrying event_id=e-1 attempt=2 err="broker down"\n',
    );
  });

  it('passes a line that is not JSON through', () => {
    assert.equal(formatPrettyLine('plain text'), 'plain text\n');
  });
});
