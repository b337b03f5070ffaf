import RequestQueue from 'kafkajs/src/network/requestQueue';

const PATCHED = Symbol.for('walbox.requestQueueSpinStopped');

/**
 * kafkajs 2.2.4 re-arms a timer of `throttledUntil - now` after every check of its pending queue, even when the
 * queue is empty and nothing is throttled: a negative delay, so every broker connection wakes the event loop
 * once a millisecond for as long as it is open (kafkajs issues #1556, #1604, #1704; the fixes, PRs #1667 and
 * #1768, are in no release). That was about half of an idle relay's CPU. With nothing pending and no
 * throttle there is nothing to check: a push that cannot go at once queues itself and schedules a check, and
 * every response or timeout checks the queue. Idempotent; patches the prototype, so it also covers kafkajs
 * clients the host application creates from the same copy of kafkajs.
 */
export function stopRequestQueueSpin(): void {
  const prototype = RequestQueue.prototype as RequestQueue & { [PATCHED]?: true };
  if (prototype[PATCHED] === true) return;
  const schedule = prototype.scheduleCheckPendingRequests;
  // Another kafkajs than the pinned one: leave it alone (the unit test says whether it still spins).
  if (typeof schedule !== 'function') return;
  prototype.scheduleCheckPendingRequests = function scheduleUnlessIdle(this: RequestQueue): void {
    if (this.pending.length === 0 && this.throttledUntil <= Date.now()) return;
    schedule.call(this);
  };
  prototype[PATCHED] = true;
}
