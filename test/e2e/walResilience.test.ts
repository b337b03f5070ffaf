import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';

import pg from 'pg';

import { assertAllDelivered } from '../support/deliveryReport.js';
import { writeLoad, writeOrders, type WrittenEvent } from '../support/outboxWriter.js';
import { countProcessed, withRelaySetup } from '../support/relaySetup.js';
import { startBroker, stopBroker } from '../support/stackControl.js';
import { withClient } from '../support/testDatabase.js';
import { type WalFixture } from '../support/walFixture.js';
import { waitFor } from '../support/waitFor.js';

const STREAMING = /streaming from the replication slot/;
const BATCH_SIZE = 100;
/** Events published but not yet marked: at most two batches (core/streamRelay.ts). */
const IN_FLIGHT_WINDOW = 2 * BATCH_SIZE;

async function confirmedFlush(fixture: WalFixture): Promise<string> {
  const rows = await fixture.query<{ lsn: string }>(
    'SELECT confirmed_flush_lsn::text AS lsn FROM pg_replication_slots WHERE slot_name = $1',
    [fixture.slot],
  );
  return rows[0]?.lsn ?? '';
}

function spreadLoad(
  fixture: WalFixture,
  events = 3_000,
): Promise<{ committed: WrittenEvent[]; rolledBack: string[] }> {
  return writeLoad({
    schema: fixture.schema,
    aggregateType: 'order',
    writers: 4,
    events,
    aggregates: 200,
    pauseMs: 25,
  });
}

describe('WAL mode resilience', () => {
  it('keeps confirmed_flush_lsn put while the broker is stopped for 20 s under load, then delivers everything in order', async () => {
    await withRelaySetup(async (setup) => {
      const relay = setup.startRelay();
      await relay.waitForLine(STREAMING);
      const loading = spreadLoad(setup.fixture, 4_000);
      await waitFor(async () => (await countProcessed(setup.fixture)) >= 300, { what: 'delivery under way' });
      await stopBroker();
      try {
        await relay.waitForLine(/"pipeline not ready"/, 60_000);
        // Anything acked before the stop is confirmed by now; from here on nothing may be.
        const baseline = await confirmedFlush(setup.fixture);
        const samples: string[] = [];
        const until = Date.now() + 20_000;
        while (Date.now() < until) {
          samples.push(await confirmedFlush(setup.fixture));
          await new Promise((resolve) => setTimeout(resolve, 250));
        }
        assert.deepEqual(
          [...new Set(samples)],
          [baseline],
          'confirmed_flush_lsn moved while the broker was down',
        );
      } finally {
        await startBroker();
      }
      const load = await loading;
      await assertAllDelivered(setup, load.committed, load.committed.length);
      await waitFor(() => relay.lines.filter((l) => l.includes('"msg":"pipeline ready"')).length >= 2, {
        what: 'readiness back after the outage',
      });
    });
  });

  it('pauses the replication socket on a backlog the broker cannot take, keeps status updates going, and stays bounded (G6)', async (t) => {
    await withRelaySetup(async (setup) => {
      const relay = setup.startRelay('--log-level', 'debug');
      await relay.waitForLine(STREAMING);
      await stopBroker();
      let peakKb = 0;
      try {
        // Far more than the high-water mark (10 000 items), written while nothing can be published.
        const table = `${pg.escapeIdentifier(setup.fixture.schema)}.outbox_events`;
        await setup.fixture.query(
          `INSERT INTO ${table} (aggregate_type, aggregate_id, event_type, payload)
           SELECT 'order', 'agg-' || (g % 100), 'bulk', jsonb_build_object('version', g, 'filler', repeat('x', 500))
             FROM generate_series(1, 60000) AS g`,
        );
        await relay.waitForLine(/"msg":"replication paused"/, 60_000);
        // The walsender hears from the paused relay: its reply time keeps moving (status updates every 1 s).
        const replyTime = async (): Promise<string> => {
          const rows = await setup.fixture.query<{ reply: string | null }>(
            `SELECT reply_time::text AS reply FROM pg_stat_replication
              WHERE pid = (SELECT active_pid FROM pg_replication_slots WHERE slot_name = $1)`,
            [setup.fixture.slot],
          );
          return rows[0]?.reply ?? '';
        };
        let first = '';
        await waitFor(async () => (first = await replyTime()) !== '', { what: 'a walsender reply time' });
        await new Promise((resolve) => setTimeout(resolve, 4_000));
        const second = await replyTime();
        assert.ok(second > first, `reply_time did not move while paused (${first} → ${second})`);
        const status = readFileSync(`/proc/${relay.child.pid ?? 0}/status`, 'utf8');
        peakKb = Number(/VmHWM:\s+(\d+)/.exec(status)?.[1]);
        t.diagnostic(`relay peak RSS while paused on a 60k-event backlog: ${Math.round(peakKb / 1024)} MiB`);
        assert.ok(peakKb < 300 * 1024, `peak RSS ${peakKb} kB while paused`);
      } finally {
        await startBroker();
      }
      await waitFor(async () => (await countProcessed(setup.fixture)) === 60_000, {
        what: 'the whole backlog delivered after the broker came back',
        timeoutMs: 180_000,
      });
    });
  });

  it('reconnects after pg_terminate_backend of the walsender under load, losing nothing', async () => {
    await withRelaySetup(async (setup) => {
      const relay = setup.startRelay();
      await relay.waitForLine(STREAMING);
      const loading = spreadLoad(setup.fixture);
      for (const target of [300, 900]) {
        await waitFor(async () => (await countProcessed(setup.fixture)) >= target, {
          what: `${target} delivered`,
        });
        await setup.fixture.query(
          'SELECT pg_terminate_backend(active_pid) FROM pg_replication_slots WHERE slot_name = $1 AND active_pid IS NOT NULL',
          [setup.fixture.slot],
        );
        await waitFor(() => relay.lines.filter((l) => STREAMING.test(l)).length >= (target === 300 ? 2 : 3), {
          what: 'streaming again',
        });
      }
      assert.ok(relay.lines.some((l) => /replication interrupted; reconnecting/.test(l)));
      const load = await loading;
      await assertAllDelivered(setup, load.committed, IN_FLIGHT_WINDOW);
    });
  });

  it('recovers by itself after being stopped (SIGSTOP) for longer than wal_sender_timeout', async () => {
    await withClient((c) =>
      c.query(`ALTER SYSTEM SET wal_sender_timeout = '3s'`).then(() => c.query('SELECT pg_reload_conf()')),
    );
    try {
      await withRelaySetup(async (setup) => {
        const relay = setup.startRelay();
        await relay.waitForLine(STREAMING);
        const loading = spreadLoad(setup.fixture);
        await waitFor(async () => (await countProcessed(setup.fixture)) >= 300, {
          what: 'delivery under way',
        });
        relay.child.kill('SIGSTOP');
        // The server gives up on the silent relay: its walsender goes and the slot turns inactive.
        await waitFor(
          async () =>
            (
              await setup.fixture.query<{ active: boolean }>(
                'SELECT active FROM pg_replication_slots WHERE slot_name = $1',
                [setup.fixture.slot],
              )
            )[0]?.active === false,
          { timeoutMs: 30_000, what: 'the walsender to time out' },
        );
        relay.child.kill('SIGCONT');
        const load = await loading;
        await assertAllDelivered(setup, load.committed, IN_FLIGHT_WINDOW);
        assert.equal(relay.child.exitCode, null, 'the same relay process recovered');
      });
    } finally {
      await withClient((c) =>
        c.query('ALTER SYSTEM RESET wal_sender_timeout').then(() => c.query('SELECT pg_reload_conf()')),
      );
    }
  });

  it('delivers one 100k-row transaction in order with bounded memory', async (t) => {
    await withRelaySetup(async (setup) => {
      const relay = setup.startRelay('--batch-size', '500');
      await relay.waitForLine(STREAMING);
      const table = `${pg.escapeIdentifier(setup.fixture.schema)}.outbox_events`;
      await setup.fixture.query(
        `INSERT INTO ${table} (aggregate_type, aggregate_id, event_type, payload)
         SELECT 'order', 'agg-' || (g % 100), 'bulk', jsonb_build_object('version', g, 'filler', repeat('x', 200))
           FROM generate_series(1, 100000) AS g`,
      );
      const rows = await setup.fixture.query<{ id: string; aggregate_id: string; version: number }>(
        `SELECT id::text, aggregate_id, (payload->>'version')::int AS version FROM ${table}`,
      );
      const committed = rows.map((r) => ({ id: r.id, aggregateId: r.aggregate_id, version: r.version }));
      await assertAllDelivered(setup, committed, 0);
      const status = readFileSync(`/proc/${relay.child.pid ?? 0}/status`, 'utf8');
      const peakKb = Number(/VmHWM:\s+(\d+)/.exec(status)?.[1]);
      t.diagnostic(`relay peak RSS for a 100k-row transaction: ${Math.round(peakKb / 1024)} MiB`);
      assert.ok(peakKb < 512 * 1024, `peak RSS ${peakKb} kB stays bounded`);
    });
  });

  it('gives up after --shutdown-timeout when the broker is down, confirms nothing unacked and exits 1', async () => {
    await withRelaySetup(async (setup) => {
      const relay = setup.startRelay('--shutdown-timeout', '3s');
      await relay.waitForLine(STREAMING);
      const delivered = await writeOrders(setup.fixture.schema, 200, 20);
      await waitFor(async () => (await countProcessed(setup.fixture)) === 200, {
        what: 'first events delivered',
      });
      await stopBroker();
      let pending: WrittenEvent[] = [];
      try {
        pending = (await writeOrders(setup.fixture.schema, 100, 20)).committed;
        await relay.waitForLine(/publish to Kafka failed; retrying/, 60_000);
        const before = await confirmedFlush(setup.fixture);
        const exit = await relay.stop('SIGTERM');
        assert.equal(exit.code, 1);
        assert.ok(
          relay.lines.some((l) => /shutdown-timeout/.test(l)),
          'says why it gave up',
        );
        assert.equal(await confirmedFlush(setup.fixture), before);
      } finally {
        await startBroker();
      }
      const second = setup.startRelay();
      await second.waitForLine(STREAMING);
      await assertAllDelivered(setup, [...delivered.committed, ...pending], pending.length);
    });
  });
});
