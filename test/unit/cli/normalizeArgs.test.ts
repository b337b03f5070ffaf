import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { normalizeArgs } from '../../../src/cli/normalizeArgs.js';
import { readConfigFlags } from '../../../src/cli/configOptions.js';
import { ConfigError } from '../../../src/errors.js';

describe('normalizeArgs', () => {
  it('reads boolean flags with a value as the environment does', () => {
    for (const word of ['yes', '1', 'on', 'true', 'TRUE']) {
      assert.deepEqual(normalizeArgs(['run', `--create-topics=${word}`]), ['run', '--create-topics']);
    }
    for (const word of ['no', '0', 'off', 'false']) {
      assert.deepEqual(normalizeArgs(['run', `--kafka-ssl=${word}`]), ['run', '--no-kafka-ssl']);
    }
    assert.deepEqual(normalizeArgs(['status', '--json=yes']), ['status', '--json']);
  });

  it('rejects a boolean value that is none, naming the flag', () => {
    assert.throws(
      () => normalizeArgs(['run', '--create-topics=maybe']),
      (error: unknown) =>
        error instanceof ConfigError &&
        error.message === 'invalid --create-topics "maybe": must be true or false (also yes/no, on/off, 1/0)',
    );
  });

  it('keeps a negative value with its flag, leaves the rest alone', () => {
    assert.deepEqual(normalizeArgs(['run', '--startup-timeout', '-1s', '--batch-size', '-5']), [
      'run',
      '--startup-timeout=-1s',
      '--batch-size=-5',
    ]);
    assert.deepEqual(normalizeArgs(['run', '--batch-size=10', '--topic', 'x', '--', '--json=maybe']), [
      'run',
      '--batch-size=10',
      '--topic',
      'x',
      '--',
      '--json=maybe',
    ]);
  });

  it('hands a flag value on as given (readConfigFlags)', () => {
    assert.deepEqual(readConfigFlags({ 'create-topics': true }, 'run'), { createTopics: true });
  });
});
