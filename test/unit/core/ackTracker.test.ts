import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { AckTracker } from '../../../src/core/ackTracker.js';

describe('AckTracker', () => {
  it('confirms a transaction only when it is committed and all its events are acked', () => {
    const tracker = new AckTracker(100n);
    const t = tracker.begin();
    tracker.addEvent(t);
    tracker.addEvent(t);
    tracker.ack(t);
    tracker.ack(t);
    assert.equal(tracker.confirmable(), 100n, 'acked but not committed');
    tracker.commit(t, 200n);
    assert.equal(tracker.confirmable(), 200n);
  });

  it('never confirms past a transaction that is still in flight (contiguous prefix only)', () => {
    const tracker = new AckTracker(0n);
    const first = tracker.begin();
    tracker.addEvent(first);
    tracker.commit(first, 10n);
    const second = tracker.begin();
    tracker.addEvent(second);
    tracker.commit(second, 20n);
    tracker.ack(second);
    assert.equal(tracker.confirmable(), 0n);
    tracker.ack(first);
    assert.equal(tracker.confirmable(), 20n);
  });

  it('confirms exact commit end LSNs, never +1', () => {
    const tracker = new AckTracker(0n);
    const t = tracker.begin();
    tracker.commit(t, 0x1533368n);
    assert.equal(tracker.confirmable(), 0x1533368n);
  });

  it('takes a keepalive position only when nothing is in flight (G5)', () => {
    const tracker = new AckTracker(50n);
    const open = tracker.begin();
    tracker.observeKeepalive(500n);
    assert.equal(tracker.confirmable(), 50n, 'a transaction is open');
    tracker.commit(open, 60n);
    tracker.observeKeepalive(500n);
    assert.equal(tracker.confirmable(), 500n);
    tracker.observeKeepalive(400n);
    assert.equal(tracker.confirmable(), 500n, 'never backwards');
  });

  it('counts events in flight and rejects an ack without a pending event', () => {
    const tracker = new AckTracker(0n);
    const t = tracker.begin();
    tracker.addEvent(t);
    assert.equal(tracker.inFlightEvents(), 1);
    tracker.ack(t);
    assert.equal(tracker.inFlightEvents(), 0);
    assert.throws(() => tracker.ack(t), /ack without a pending event/);
  });
});
