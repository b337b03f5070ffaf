import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { describe, it } from 'node:test';

import { handleProcessWarnings } from '../../../src/observability/handleProcessWarnings.js';

function makeWarning(name: string, message: string): Error {
  const warning = new Error(message);
  warning.name = name;
  return warning;
}

describe('handleProcessWarnings', () => {
  it('replaces the listeners already there (Node prints warnings to stderr with one)', () => {
    const target = new EventEmitter();
    const printed: string[] = [];
    target.on('warning', (w: Error) => printed.push(w.name));
    const reported: string[] = [];
    handleProcessWarnings((w) => reported.push(`${w.name}: ${w.message}`), target);
    target.emit('warning', makeWarning('DeprecationWarning', 'Buffer() is deprecated'));
    assert.deepEqual(printed, []);
    assert.deepEqual(reported, ['DeprecationWarning: Buffer() is deprecated']);
  });
});
