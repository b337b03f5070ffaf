import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { findProblems } from '../../../src/cli/commands/statusCommand.js';
import { formatBytes, formatSeconds } from '../../../src/cli/formatUnits.js';
import type { SlotStatus } from '../../../src/db/readSlotStatus.js';

const SLOT: SlotStatus = {
  slot: 'walbox',
  exists: true,
  active: true,
  activePid: 7,
  activeReader: { pid: 7, applicationName: 'walbox', clientAddr: '10.0.0.7', backendStart: null },
  lagBytes: 0,
  retainedWalBytes: 0,
  walStatus: 'reserved',
  safeWalSizeBytes: null,
  confirmedFlushLsn: '0/1',
  restartLsn: '0/1',
  plugin: 'pgoutput',
  failover: null,
};
const QUIET = { pending: 0, oldestPendingAgeSeconds: 0, deadLetters: 0 };

describe('walbox status', () => {
  it('is healthy with an active slot, nothing stuck and no dead letters', () => {
    assert.deepEqual(findProblems(SLOT, QUIET, 300), []);
    assert.deepEqual(findProblems(null, QUIET, 300), []);
  });

  it('names every problem', () => {
    assert.deepEqual(
      findProblems(
        { ...SLOT, active: false, walStatus: 'unreserved' },
        { pending: 5, oldestPendingAgeSeconds: 3_700, deadLetters: 2 },
        300,
      ),
      [
        'replication slot walbox is not active (is the relay running?)',
        'replication slot walbox is about to be invalidated (wal_status unreserved)',
        'the oldest pending event waits for 1h 1m 40s',
        '2 dead letters (see walbox dlq list)',
      ],
    );
    assert.match(findProblems({ ...SLOT, exists: false }, QUIET, 300)[0] ?? '', /does not exist/);
    assert.match(findProblems({ ...SLOT, walStatus: 'lost' }, QUIET, 300)[0] ?? '', /was invalidated/);
  });

  it('prints sizes and ages for people', () => {
    assert.equal(formatBytes(512), '512 B');
    assert.equal(formatBytes(1536), '1.5 KiB');
    assert.equal(formatBytes(3 * 1024 ** 3), '3.0 GiB');
    assert.equal(formatBytes(null), '—');
    assert.equal(formatSeconds(42), '42s');
    assert.equal(formatSeconds(90_061), '1d 1h 1m');
  });
});
