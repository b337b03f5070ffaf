import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { formatDeadLetterLine } from '../../../src/cli/formatDeadLetterLine.js';
import type { DeadLetter } from '../../../src/db/deadLetters.js';

// eslint-disable-next-line no-control-regex -- what the terminal must never receive raw
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;

const LETTER: DeadLetter = {
  id: '00000000-0000-0000-0000-000000000001',
  aggregateType: 'order',
  aggregateId: 'o-1',
  eventType: 'order.paid',
  attempts: 3,
  createdAt: '2026-12-02T15:00:00Z',
  deadLetteredAt: '2026-12-02T15:04:05Z',
  lastError: 'message too large',
};

describe('formatDeadLetterLine', () => {
  it('prints one line per dead letter', () => {
    assert.equal(
      formatDeadLetterLine(LETTER),
      '00000000-0000-0000-0000-000000000001  2026-12-02T15:04:05Z  order/o-1  order.paid  attempts=3  message too large\n',
    );
    assert.equal(
      formatDeadLetterLine({ ...LETTER, lastError: null }),
      '00000000-0000-0000-0000-000000000001  2026-12-02T15:04:05Z  order/o-1  order.paid  attempts=3  \n',
    );
  });

  it('escapes control characters from row content, so nothing reaches the terminal raw', () => {
    const line = formatDeadLetterLine({
      ...LETTER,
      aggregateType: 'order\u202e',
      aggregateId: 'o-1\u001b]0;owned\u0007',
      eventType: 'paid\u009b2J\u007f',
      lastError: 'bad\r\n00000000-0000-0000-0000-000000000002  fake line\u001b[2K\u2028',
    });
    assert.equal(
      line,
      '00000000-0000-0000-0000-000000000001  2026-12-02T15:04:05Z  order\\u202e/o-1\\x1b]0;owned\\x07  ' +
        'paid\\x9b2J\\x7f  attempts=3  bad\\x0d\\x0a00000000-0000-0000-0000-000000000002  fake line\\x1b[2K\\u2028\n',
    );
    assert.equal(line.split('\n').length, 2, 'one line only');
    assert.doesNotMatch(line.slice(0, -1), UNSAFE);
  });
});
