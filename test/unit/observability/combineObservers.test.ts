import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { combineObservers } from '../../../src/observability/combineObservers.js';

describe('combineObservers', () => {
  it('forwards each hook to every observer, and a throwing observer never reaches the relay', () => {
    const seen: string[] = [];
    const observer = combineObservers(
      {
        inFlight: () => {
          throw new Error('metrics bug');
        },
      },
      { inFlight: (n) => seen.push(`in flight ${String(n)}`), recovered: ({ step }) => seen.push(step) },
    );
    assert.doesNotThrow(() => observer.inFlight?.(3));
    observer.recovered?.({ step: 'poll' });
    assert.deepEqual(seen, ['in flight 3', 'poll']);
  });
});
