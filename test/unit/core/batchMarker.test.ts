import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { BatchMarker } from '../../../src/core/batchMarker.js';
import type { PublishedBatch } from '../../../src/core/deliverBatch.js';
import type { OutboxRecord } from '../../../src/core/outboxRecord.js';

function batch(...ids: string[]): PublishedBatch {
  return { published: ids.map((id) => ({ id }) as OutboxRecord), rejected: [], skipped: 0 };
}

/** Records each marking (the ids it marks); a marking settles when the test says so, or at once. */
class Marks {
  readonly calls: string[][] = [];
  private readonly pending: (() => void)[] = [];
  constructor(private readonly holdEach = false) {}
  readonly mark = (b: PublishedBatch): Promise<void> => {
    this.calls.push([...b.published, ...b.rejected.map((r) => r.record)].map((r) => r.id));
    if (!this.holdEach) return Promise.resolve();
    return new Promise((resolve) => this.pending.push(resolve));
  };
  release(): void {
    this.pending.shift()?.();
  }
}

const tick = (ms = 0): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

describe('BatchMarker', () => {
  it('gathers the small batches that arrive within the delay into one marking, in order', async () => {
    const marks = new Marks();
    const marker = new BatchMarker(marks.mark, { delayMs: 30, rowsAtOnce: 100 });
    const done = [marker.add(batch('a')), marker.add(batch('b', 'c'))];
    await tick(5);
    done.push(marker.add(batch('d')));
    assert.deepEqual(marks.calls, [], 'nothing marked before the delay');
    await Promise.all(done);
    assert.deepEqual(marks.calls, [['a', 'b', 'c', 'd']]);
  });

  it("marks a full batch's worth of rows at once", async () => {
    const marks = new Marks();
    const marker = new BatchMarker(marks.mark, { delayMs: 60_000, rowsAtOnce: 3 });
    await Promise.all([marker.add(batch('a')), marker.add(batch('b', 'c'))]);
    assert.deepEqual(marks.calls, [['a', 'b', 'c']]);
  });

  it('runs one marking at a time; what arrives meanwhile goes in the next one', async () => {
    const marks = new Marks(true);
    const marker = new BatchMarker(marks.mark, { delayMs: 0, rowsAtOnce: 100 });
    const first = marker.add(batch('a'));
    await tick();
    const later = [marker.add(batch('b')), marker.add(batch('c'))];
    await tick(5);
    assert.deepEqual(marks.calls, [['a']], 'the second marking waits for the first');
    marks.release();
    await first;
    await tick();
    marks.release();
    await Promise.all(later);
    assert.deepEqual(marks.calls, [['a'], ['b', 'c']]);
  });

  it('stops waiting for more when hurried or finishing', async () => {
    const marks = new Marks();
    const hurried = new BatchMarker(marks.mark, { delayMs: 60_000, rowsAtOnce: 100 });
    const first = hurried.add(batch('a'));
    hurried.hurry();
    await first;
    const finishing = new BatchMarker(marks.mark, { delayMs: 60_000, rowsAtOnce: 100 });
    finishing.finish();
    await finishing.add(batch('b'));
    await finishing.add(batch('c'));
    assert.deepEqual(marks.calls, [['a'], ['b'], ['c']]);
  });

  it('settles a batch with nothing to mark at once when nothing is ahead of it', async () => {
    const marks = new Marks();
    const marker = new BatchMarker(marks.mark, { delayMs: 60_000, rowsAtOnce: 100 });
    assert.equal(await marker.add(batch()), 0);
    assert.deepEqual(marks.calls, []);
  });

  it('fails every batch of a marking that failed', async () => {
    const marker = new BatchMarker(() => Promise.reject(new Error('permission denied')), {
      delayMs: 10,
      rowsAtOnce: 100,
    });
    const results = await Promise.allSettled([marker.add(batch('a')), marker.add(batch('b'))]);
    assert.deepEqual(
      results.map((r) => r.status),
      ['rejected', 'rejected'],
    );
  });
});
