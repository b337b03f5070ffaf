import assert from 'node:assert/strict';
import { appendFileSync } from 'node:fs';
import { describe, it } from 'node:test';

import { BATCH_SIZE, runFaultScenario } from '../support/faultScenario.js';
import { startReplicatedPair } from '../support/stackControl.js';
import { TcpProxy } from '../support/tcpProxy.js';
import { withClient } from '../support/testDatabase.js';
import { waitFor } from '../support/waitFor.js';

const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
const STREAMING = /streaming from the replication slot/;
const SLOT_RECREATED = /replication slot missing: creating it/;
const TABLE_CATCH_UP = /delivering the rows pending in the table first|replication slot missing/;
const FAULTS = process.env['FAULTS'] ?? '';
const NAME = 'delivers every committed event exactly in order across a primary failover, losing nothing';

/**
 * Primary failover on the PostgreSQL version under test (TEST_PG_VERSION; `npm test` runs this file on every
 * supported version): a primary with a synchronous physical standby, walbox and the writers reaching the primary
 * through a TCP proxy (the VIP or DNS name), the primary crashed under load, the standby promoted and the proxy
 * moved. PostgreSQL ≤ 16 loses the slot at promotion: walbox recreates it and catches up from the table.
 * PostgreSQL ≥ 17 keeps walbox's failover slot on the standby: walbox resumes from it without a table catch-up.
 */
describe('primary failover', () => {
  // Like faults.test.ts: FAULTS=<text> (while working on one scenario) runs this one only when the text matches.
  if (FAULTS !== '' && FAULTS !== 'all' && !`primary failover ${NAME}`.includes(FAULTS)) return;
  it(NAME, async () => {
    const pair = await startReplicatedPair();
    const proxy = await TcpProxy.start(pair.primary.port);
    const url = new URL(pair.primary.url);
    url.port = String(proxy.port);
    let promotedAt = 0;
    const startedAt = Date.now();
    let linesBeforeFailover = 0;
    let firstDeliveryMs = Number.NaN;
    let relayLines: readonly string[] = [];
    const expectation = pair.syncsSlots
      ? 'resumes from the failover slot synced to the standby'
      : 'recreates the slot lost at promotion and catches up from the table';
    try {
      const result = await runFaultScenario({
        scenario: `primary failover, PostgreSQL ${pair.version}: ${expectation}`,
        mode: 'wal',
        databaseUrl: url.toString(),
        // A short backoff: the seconds from promotion to delivery measure walbox, not its retry schedule.
        relayArgs: ['--retry-backoff-max', '1s'],
        // Writes go on for ~25 s and at least 5 s past the promotion, however long the slot takes to sync.
        // (Bounded by 3 minutes in all: a scenario that failed before the promotion must not write forever.)
        load: {
          events: 6_000,
          pauseMs: 50,
          until: () =>
            (promotedAt > 0 && Date.now() - promotedAt > 5_000) || Date.now() - startedAt > 180_000,
        },
        inject: async (context) => {
          const { fixture } = context.setup;
          await pause(3_000);
          if (pair.syncsSlots) {
            // Only a synced slot that the standby has persisted survives the promotion. The sync worker naps up
            // to 30 s while it has nothing to do; a configuration reload wakes it.
            await waitFor(
              () =>
                withClient(async (client) => {
                  await client.query('SELECT pg_reload_conf()');
                  const { rows } = await client.query<{ ok: boolean }>(
                    'SELECT synced AND NOT temporary AS ok FROM pg_replication_slots WHERE slot_name = $1',
                    [fixture.slot],
                  );
                  return rows[0]?.ok === true;
                }, pair.standby.url),
              { what: `slot ${fixture.slot} synced to the standby`, timeoutMs: 60_000, intervalMs: 500 },
            );
          }
          await pause(1_000);
          linesBeforeFailover = context.relay().lines.length;
          assert.ok(context.loading(), 'the writers finished before the crash: the load is too short');
          await pair.crashPrimary();
          await pause(1_000);
          await pair.promoteStandby();
          promotedAt = Date.now();
          proxy.retarget(pair.standby.port);
          await waitFor(
            () =>
              context
                .relay()
                .lines.slice(linesBeforeFailover)
                .some((l) => STREAMING.test(l)),
            {
              what: 'the relay streaming from the promoted standby',
              timeoutMs: 120_000,
              intervalMs: 100,
            },
          );
          relayLines = context.relay().lines;
          return Promise.resolve();
        },
        onDelivered: (messages) => {
          const after = messages.map((m) => m.timestamp).filter((t) => t >= promotedAt);
          firstDeliveryMs = after.length > 0 ? Math.min(...after) - promotedAt : Number.NaN;
        },
      });
      const afterFailover = relayLines.slice(linesBeforeFailover);
      const line =
        `failover PostgreSQL ${pair.version}: ${String(result.committed)} events, ${String(result.lost)} lost, ` +
        `${String(result.phantom)} phantom, ${String(result.reordered)} reordered, ${String(result.duplicates)} dups, ` +
        `${(firstDeliveryMs / 1000).toFixed(2)} s from promotion to the first delivery, ` +
        (afterFailover.some((l) => TABLE_CATCH_UP.test(l)) ? 'with' : 'without') +
        ' a table catch-up';
      console.log(line);
      const file = process.env['FAULT_RESULTS'];
      if (file !== undefined && file !== '') appendFileSync(`${file}.failover`, `${line}\n`);
      assert.deepEqual(
        {
          lost: result.lost,
          phantom: result.phantom,
          reordered: result.reordered,
          leaked: result.leakedSecrets,
        },
        { lost: 0, phantom: 0, reordered: 0, leaked: 0 },
      );
      // Published but unmarked at the crash: the in-flight window of one relay (guarantee G4).
      assert.ok(result.duplicates <= 2 * BATCH_SIZE, `${String(result.duplicates)} duplicates`);
      assert.ok(Number.isFinite(firstDeliveryMs), 'nothing was delivered after the promotion');
      if (pair.syncsSlots) {
        assert.ok(
          !afterFailover.some((l) => TABLE_CATCH_UP.test(l)),
          `a table catch-up after the failover:\n${afterFailover.join('\n')}`,
        );
      } else {
        assert.ok(
          afterFailover.some((l) => SLOT_RECREATED.test(l)),
          `no slot recreation after the failover:\n${afterFailover.join('\n')}`,
        );
      }
    } finally {
      await proxy.close();
      await pair.stop();
    }
  });
});
