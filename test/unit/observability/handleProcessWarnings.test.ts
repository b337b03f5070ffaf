import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { describe, it } from 'node:test';

import {
  handleProcessWarnings,
  isKnownHarmlessWarning,
} from '../../../src/observability/handleProcessWarnings.js';

function makeWarning(name: string, message: string, frame: string): Error {
  const warning = new Error(message);
  warning.name = name;
  warning.stack = `${name}: ${message}\n    at new Timeout (node:internal/timers:233:17)\n    at ${frame}`;
  return warning;
}

const KAFKAJS_FRAME =
  'RequestQueue.scheduleCheckPendingRequests (/app/node_modules/kafkajs/src/network/requestQueue/index.js:317:37)';

describe('handleProcessWarnings', () => {
  it('replaces the listeners already there (Node prints warnings to stderr with one)', () => {
    const target = new EventEmitter();
    const printed: string[] = [];
    target.on('warning', (w: Error) => printed.push(w.name));
    const reported: string[] = [];
    handleProcessWarnings((w) => reported.push(`${w.name}: ${w.message}`), target);
    target.emit('warning', makeWarning('DeprecationWarning', 'Buffer() is deprecated', 'app.js:1:1'));
    assert.deepEqual(printed, []);
    assert.deepEqual(reported, ['DeprecationWarning: Buffer() is deprecated']);
  });

  it("leaves out kafkajs's negative timeout (Node 24, kafkajs issue 1751) and reports anyone else's", () => {
    const target = new EventEmitter();
    const reported: Error[] = [];
    handleProcessWarnings((w) => reported.push(w), target);
    const fromKafkajs = makeWarning('TimeoutNegativeWarning', '-1796 is a negative number.', KAFKAJS_FRAME);
    const fromElsewhere = makeWarning('TimeoutNegativeWarning', '-5 is a negative number.', 'app.js:3:1');
    target.emit('warning', fromKafkajs);
    target.emit('warning', fromElsewhere);
    assert.deepEqual(reported, [fromElsewhere]);
    assert.equal(isKnownHarmlessWarning(fromKafkajs), true);
    assert.equal(isKnownHarmlessWarning(fromElsewhere), false);
  });
});
