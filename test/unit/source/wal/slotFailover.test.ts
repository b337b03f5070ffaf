import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { PreconditionError } from '../../../../src/errors.js';
import { decideSlotFailover, formatServerVersion } from '../../../../src/source/wal/slotFailover.js';

describe('--slot-failover', () => {
  it('auto makes a failover slot from PostgreSQL 17 on, and none before', () => {
    assert.equal(decideSlotFailover('auto', 150_015), false);
    assert.equal(decideSlotFailover('auto', 160_010), false);
    assert.equal(decideSlotFailover('auto', 170_006), true);
    assert.equal(decideSlotFailover('auto', 180_001), true);
  });

  it('off never does; on refuses a server that cannot, naming the version and the fix', () => {
    assert.equal(decideSlotFailover('off', 180_001), false);
    assert.equal(decideSlotFailover('on', 170_006), true);
    assert.throws(
      () => decideSlotFailover('on', 160_010),
      (error: unknown) =>
        error instanceof PreconditionError &&
        /needs PostgreSQL 17 or later \(this server is 16\.10\).*--slot-failover auto/.test(error.message),
    );
  });

  it('formats server_version_num as people write versions', () => {
    assert.equal(formatServerVersion(170_006), '17.6');
    assert.equal(formatServerVersion(160_010), '16.10');
  });
});
