import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import RequestQueue from 'kafkajs/src/network/requestQueue';

import { stopRequestQueueSpin } from '../../../../src/sink/kafka/stopRequestQueueSpin.js';

const quiet = { debug: () => undefined, warn: () => undefined };

function createQueue(): RequestQueue {
  return new RequestQueue({
    maxInFlightRequests: 1,
    requestTimeout: 30_000,
    enforceRequestTimeout: false,
    clientId: 'test',
    broker: 'k1:9092',
    logger: quiet,
  });
}

/** Checks the queue's timer, then clears it at once: a pending fake request must never reach the timer. */
function armedAfter(act: (queue: RequestQueue) => void): boolean {
  const queue = createQueue();
  try {
    act(queue);
    return queue.throttleCheckTimeoutId !== null;
  } finally {
    queue.destroy();
  }
}

describe('stopRequestQueueSpin', () => {
  it('arms no timer after a check of an empty, unthrottled queue (kafkajs 2.2.4 re-arms one every millisecond)', () => {
    stopRequestQueueSpin();
    assert.equal(
      armedAfter((queue) => queue.checkPendingRequests()),
      false,
    );
  });

  it('still schedules a check while requests are pending or the broker throttles', () => {
    stopRequestQueueSpin();
    const pending = armedAfter((queue) => {
      queue.pending.push({});
      queue.scheduleCheckPendingRequests();
    });
    const throttled = armedAfter((queue) => {
      queue.maybeThrottle(50);
      queue.checkPendingRequests();
    });
    assert.deepEqual({ pending, throttled }, { pending: true, throttled: true });
  });

  it('patches once however often it is called', () => {
    stopRequestQueueSpin();
    const patched = RequestQueue.prototype.scheduleCheckPendingRequests;
    stopRequestQueueSpin();
    assert.equal(RequestQueue.prototype.scheduleCheckPendingRequests, patched);
  });
});
