import assert from 'node:assert/strict';
import { getEventListeners } from 'node:events';
import { describe, it } from 'node:test';

import { untilAborted } from '../../../src/core/untilAborted.js';

describe('untilAborted', () => {
  it('settles as the promise does and leaves nothing on the signal, however many waits', async () => {
    const controller = new AbortController();
    for (let i = 0; i < 10_000; i++)
      assert.equal(await untilAborted(Promise.resolve(i), controller.signal), i);
    await assert.rejects(untilAborted(Promise.reject(new Error('boom')), controller.signal), /boom/);
    // A race against a promise that never settles kept one reaction per wait: the relay's memory grew per event.
    assert.equal(getEventListeners(controller.signal, 'abort').length, 0);
  });

  it('rejects with the reason as soon as the signal aborts, while the promise is still pending', async () => {
    const controller = new AbortController();
    const waiting = untilAborted(new Promise<never>(() => undefined), controller.signal);
    controller.abort(new Error('batch failed'));
    await assert.rejects(waiting, /batch failed/);
    await assert.rejects(untilAborted(Promise.resolve(1), controller.signal), /batch failed/);
  });
});
