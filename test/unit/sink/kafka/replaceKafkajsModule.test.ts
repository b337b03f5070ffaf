import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { describe, it } from 'node:test';

import { replaceKafkajsModule } from '../../../../src/sink/kafka/replaceKafkajsModule.js';

const load = createRequire(__filename);

describe('replaceKafkajsModule', () => {
  it('replaces a module not loaded yet, once', () => {
    const target = 'kafkajs/src/utils/shuffle';
    const loadedBy = 'kafkajs/src/utils/groupBy';
    let calls = 0;
    const replacement = (array: unknown[]): unknown[] => array;
    const replace = (kafkajs: (array: unknown[]) => unknown[]): ((array: unknown[]) => unknown[]) => {
      calls++;
      assert.equal(typeof kafkajs, 'function');
      assert.notEqual(kafkajs, replacement);
      return replacement;
    };
    assert.equal(load.cache[load.resolve(target)], undefined);
    assert.equal(load.cache[load.resolve(loadedBy)], undefined);
    assert.equal(replaceKafkajsModule(target, [loadedBy], replace), 'installed');
    assert.equal(load(target), replacement);
    assert.equal(replaceKafkajsModule(target, [loadedBy], replace), 'installed');
    assert.equal(calls, 1);
  });

  it('leaves kafkajs alone once the module that keeps the function has loaded', () => {
    const target = 'kafkajs/src/utils/sleep';
    const loadedBy = 'kafkajs/src/utils/waitFor';
    load(loadedBy);
    const kafkajs: unknown = load(target);
    assert.equal(
      replaceKafkajsModule(target, ['kafkajs/src/utils/swapObject', loadedBy], () => () => undefined),
      'too late',
    );
    assert.equal(
      replaceKafkajsModule(target, [loadedBy], () => () => undefined),
      'too late',
    );
    assert.equal(load(target), kafkajs);
  });

  it('leaves another kafkajs alone', () => {
    assert.equal(
      replaceKafkajsModule(
        'kafkajs/src/no/such/module',
        ['kafkajs/src/producer/sendMessages'],
        () => () => undefined,
      ),
      'unsupported',
    );
  });
});
