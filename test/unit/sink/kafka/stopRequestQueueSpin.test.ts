import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';

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

describe('stopRequestQueueSpin', () => {
  const queues: RequestQueue[] = [];
  afterEach(() => {
    for (const queue of queues.splice(0)) queue.destroy();
  });
  function track(queue: RequestQueue): RequestQueue {
    queues.push(queue);
    return queue;
  }

  it('arms no timer after a check of an empty, unthrottled queue (kafkajs 2.2.4 re-arms one every millisecond)', () => {
    stopRequestQueueSpin();
    const queue = track(createQueue());
    queue.checkPendingRequests();
    assert.equal(queue.throttleCheckTimeoutId, null);
  });

  it('still schedules a check while requests are pending or the broker throttles', () => {
    stopRequestQueueSpin();
    const pending = track(createQueue());
    pending.pending.push({});
    pending.scheduleCheckPendingRequests();
    assert.notEqual(pending.throttleCheckTimeoutId, null);

    const throttled = track(createQueue());
    throttled.maybeThrottle(50);
    throttled.checkPendingRequests();
    assert.notEqual(throttled.throttleCheckTimeoutId, null);
  });

  it('patches once however often it is called', () => {
    stopRequestQueueSpin();
    const patched = RequestQueue.prototype.scheduleCheckPendingRequests;
    stopRequestQueueSpin();
    assert.equal(RequestQueue.prototype.scheduleCheckPendingRequests, patched);
  });
});
