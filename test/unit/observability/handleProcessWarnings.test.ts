import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { describe, it } from 'node:test';

import { handleProcessWarnings } from '../../../src/observability/handleProcessWarnings.js';

function makeWarning(name: string, message: string, frame: string): Error {
  const warning = new Error(message);
  warning.name = name;
  warning.stack = `${name}: ${message}\n    at new Timeout (node:internal/timers:233:17)\n    at ${frame}`;
  return warning;
}

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
});
