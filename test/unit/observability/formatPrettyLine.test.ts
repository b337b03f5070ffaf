import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { formatPrettyLine } from '../../../src/observability/formatPrettyLine.js';

// eslint-disable-next-line no-control-regex -- what the terminal must never receive raw
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;

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

  it('escapes control characters from row content and error texts, in messages, keys and values', () => {
    const line = JSON.stringify({
      level: 'error',
      time: '2026-12-02T15:04:05.123Z',
      msg: 'event rejected\u001b[2J',
      aggregate_id: 'o-1\u001b]0;pwned\u0007',
      event_type: 'order.paid\u009b31m',
      'k\u001bey': 'v',
      reason: 'line one\nline two \u202eevil\u2028',
      err: { type: 'Error', message: 'boom\u001b[0m\r' },
      nested: { text: '\u0085\u2066x\u007f' },
    });
    const pretty = formatPrettyLine(line);
    assert.equal(
      pretty,
      '15:04:05.123 ERROR event rejected\\x1b[2J aggregate_id=o-1\\x1b]0;pwned\\x07 ' +
        'event_type=order.paid\\x9b31m k\\x1bey=v reason="line one\\nline two \\u202eevil\\u2028" ' +
        'err="boom\\u001b[0m\\r" nested={"text":"\\x85\\u2066x\\x7f"}\n',
    );
    assert.doesNotMatch(pretty.slice(0, -1), UNSAFE);
  });

  it('escapes control characters in a line that is not JSON', () => {
    assert.equal(formatPrettyLine('a\u001b[31mb\n'), 'a\\x1b[31mb\n');
  });
});
