import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import pg from 'pg';

import { reportDelivery } from '../support/deliveryReport.js';
import { writeLoad, writeOrders, type WrittenEvent } from '../support/outboxWriter.js';
import { withRelaySetup, type RelaySetup } from '../support/relaySetup.js';
import { runCli } from '../support/runCli.js';
import { startBroker, stopBroker } from '../support/stackControl.js';
import { withClient } from '../support/testDatabase.js';
import type { TopicReader } from '../support/topicReader.js';
import { waitFor } from '../support/waitFor.js';

const BATCH_SIZE = 100;

type Setup = RelaySetup;

async function countPending(setup: Setup): Promise<number> {
  const rows = await setup.fixture.query<{ n: string }>(
    `SELECT count(*) AS n FROM ${setup.table} WHERE processed_at IS NULL AND dead_lettered_at IS NULL`,
  );
  return Number(rows[0]?.n);
}

describe('poll mode', () => {
  it('3 relays, 10k events on 200 aggregates, a broker restart and poison events: nothing lost, order kept, only the poison dead-lettered', async () => {
    await withRelaySetup(
      async (setup) => {
        const relays = [1, 2, 3].map(() => setup.startRelay('--mode', 'poll', '--poll-interval', '200ms'));
        for (const relay of relays) await relay.waitForLine(/polling the outbox/);
        const loading = writeLoad({
          schema: setup.fixture.schema,
          aggregateType: 'order',
          writers: 4,
          events: 10_000,
          aggregates: 200,
          pauseMs: 2,
        });
        const poison = await setup.fixture.query<{ id: string }>(
          `INSERT INTO ${setup.table} (aggregate_type, aggregate_id, event_type, payload)
           SELECT 'order', 'agg-' || g, 'poison', jsonb_build_object('blob', repeat('x', 50000)) FROM generate_series(1, 5) g
           RETURNING id::text`,
        );
        await waitFor(async () => (await countPending(setup)) < 8_000, {
          what: 'delivery under way',
          timeoutMs: 60_000,
        });
        await stopBroker();
        await new Promise((resolve) => setTimeout(resolve, 5_000)); // the outage itself: the relays keep failing meanwhile
        await startBroker();
        const load = await loading;
        const topic = await setup.reader();
        await topic.waitForIds(
          load.committed.map((e) => e.id),
          180_000,
        );
        const report = reportDelivery(load.committed, topic.messages);
        assert.deepEqual(
          { lost: report.lost.length, phantom: report.phantom.length, reordered: report.reordered },
          { lost: 0, phantom: 0, reordered: [] },
        );
        // Only a produce request cut by the broker stop may repeat (its outcome was unknown).
        assert.ok(report.duplicates <= 3 * BATCH_SIZE, `${report.duplicates} duplicates`);
        const dead = await setup.fixture.query<{ id: string; last_error: string }>(
          `SELECT id::text, last_error FROM ${pg.escapeIdentifier(setup.fixture.schema)}.outbox_dead_letters`,
        );
        assert.deepEqual(dead.map((r) => r.id).sort(), poison.map((r) => r.id).sort());
        for (const row of dead) assert.match(row.last_error, /exceeds max\.message\.bytes/);
      },
      { batchSize: BATCH_SIZE, topic: { config: { 'max.message.bytes': '20000' } } },
    );
  });

  it('a broker outage longer than the whole backoff schedule spends no attempts and dead-letters nothing', async (t) => {
    await withRelaySetup(async (setup) => {
      // The schedule: 100 ms, 200 ms, then dead-lettered at the third attempt, were outages counted.
      const relay = setup.startRelay(
        '--mode',
        'poll',
        '--poll-interval',
        '200ms',
        '--max-attempts',
        '3',
        '--retry-backoff-initial',
        '100ms',
        '--retry-backoff-max',
        '200ms',
      );
      await relay.waitForLine(/polling the outbox/);
      await stopBroker();
      let written: WrittenEvent[] = [];
      try {
        written = (await writeOrders(setup.fixture.schema, 50, 5)).committed;
        await relay.waitForLine(/the broker is unavailable; retrying without spending attempts/, 60_000);
        await new Promise((resolve) => setTimeout(resolve, 10_000)); // 10 s: many times the schedule
        const spent = await setup.fixture.query<{ attempts: number; dead: string }>(
          `SELECT coalesce(max(attempts), 0)::int AS attempts, count(dead_lettered_at)::text AS dead FROM ${setup.table}`,
        );
        const failures = relay.lines.filter((l) => /retrying without spending attempts/.test(l)).length;
        t.diagnostic(
          `during the outage: ${String(failures)} failed publishes, max attempts ${String(spent[0]?.attempts)}, dead ${String(spent[0]?.dead)}`,
        );
        // More failed publishes than --max-attempts: counted as attempts, they would have dead-lettered the rows.
        assert.ok(failures >= 3, `${String(failures)} failed publishes`);
        assert.deepEqual(spent[0], { attempts: 0, dead: '0' });
      } finally {
        await startBroker();
      }
      const topic = await setup.reader();
      await topic.waitForIds(
        written.map((e) => e.id),
        120_000,
      );
      const report = reportDelivery(written, topic.messages);
      assert.deepEqual({ lost: report.lost.length, reordered: report.reordered }, { lost: 0, reordered: [] });
      assert.equal(await countPending(setup), 0);
    });
  });

  it('wakes on NOTIFY well before the poll interval, polls without it, and survives a killed LISTEN connection', async (t) => {
    await withRelaySetup(async (setup) => {
      const base = [
        'migrate',
        '--database-url',
        setup.fixture.databaseUrl,
        '--schema',
        setup.fixture.schema,
        '--publication',
        setup.fixture.publication,
      ];
      assert.equal((await runCli([...base, '--notify-trigger'])).code, 0);
      const relay = setup.startRelay('--mode', 'poll', '--poll-interval', '5s');
      await relay.waitForLine(/polling the outbox/);
      const topic = await setup.reader();
      const latencies = await measureLatencies(setup, topic, 10);
      const p50 = latencies[Math.floor(latencies.length / 2)] ?? Number.NaN;
      t.diagnostic(`poll mode with NOTIFY: p50 delivery latency ${p50} ms (poll interval 5000 ms)`);
      assert.ok(p50 < 2_500, `p50 ${p50} ms is well under the 5 s poll interval`);

      // The LISTEN connection dies: events still arrive (on the interval, then on NOTIFY again).
      await setup.fixture.query(
        `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'walbox listen'`,
      );
      await measureLatencies(setup, topic, 3, 20_000);

      // Without the trigger: delivered on the poll interval.
      assert.equal((await runCli([...base, '--no-notify-trigger'])).code, 0);
      const withoutNotify = await measureLatencies(setup, topic, 3, 20_000);
      t.diagnostic(
        `poll mode without NOTIFY: latencies ${withoutNotify.join(', ')} ms (poll interval 5000 ms)`,
      );
    });
  });

  it('switches wal → poll → wal under continuous writes without losing or reordering events', async () => {
    await withRelaySetup(async (setup) => {
      const committed: WrittenEvent[] = [];
      const writing = new AbortController();
      const writer = (async () => {
        while (!writing.signal.aborted) {
          const load = await writeOrders(setup.fixture.schema, 100, 50);
          committed.push(...load.committed);
        }
      })();
      for (const mode of ['wal', 'poll', 'wal']) {
        const relay = setup.startRelay('--mode', mode, '--poll-interval', '200ms');
        await relay.waitForLine(
          mode === 'wal' ? /streaming from the replication slot/ : /polling the outbox/,
        );
        const target = committed.length + 500;
        await waitFor(() => committed.length >= target, { what: 'more writes', timeoutMs: 60_000 });
        assert.equal((await relay.stop('SIGTERM')).code, 0);
      }
      writing.abort();
      await writer;
      const last = setup.startRelay('--mode', 'poll', '--poll-interval', '200ms');
      await last.waitForLine(/polling the outbox/);
      const topic = await setup.reader();
      await topic.waitForIds(committed.map((e) => e.id));
      const report = reportDelivery(committed, topic.messages);
      assert.deepEqual(
        { lost: report.lost.length, reordered: report.reordered, duplicates: report.duplicates },
        { lost: 0, reordered: [], duplicates: 0 },
      );
    });
  });
});

describe('WAL mode slot recovery', () => {
  it('delivers the rows pending in the table when the slot was dropped out of band while the relay was down', async () => {
    await withRelaySetup(async (setup) => {
      const first = setup.startRelay();
      await first.waitForLine(/streaming from the replication slot/);
      const before = await writeOrders(setup.fixture.schema, 300, 30);
      assert.equal((await first.stop('SIGTERM')).code, 0);
      const during = await writeOrders(setup.fixture.schema, 300, 30);
      await setup.fixture.query('SELECT pg_drop_replication_slot($1)', [setup.fixture.slot]);
      const second = setup.startRelay();
      await second.waitForLine(/streaming from the replication slot/);
      const topic = await setup.reader();
      const committed = [...before.committed, ...during.committed];
      await topic.waitForIds(committed.map((e) => e.id));
      const report = reportDelivery(committed, topic.messages);
      assert.deepEqual({ lost: report.lost.length, reordered: report.reordered }, { lost: 0, reordered: [] });
    });
  });

  it('recovers by itself from an invalidated slot (max_slot_wal_keep_size exceeded), losing nothing', async () => {
    await withClient((c) =>
      c
        .query(`ALTER SYSTEM SET max_slot_wal_keep_size = '1MB'`)
        .then(() => c.query('SELECT pg_reload_conf()')),
    );
    try {
      await withRelaySetup(async (setup) => {
        const relay = setup.startRelay();
        await relay.waitForLine(/streaming from the replication slot/);
        const before = await writeOrders(setup.fixture.schema, 200, 20);
        relay.child.kill('SIGSTOP');
        const during = await writeOrders(setup.fixture.schema, 200, 20);
        const noise = `${pg.escapeIdentifier(setup.fixture.schema)}.noise`;
        await setup.fixture.query(`CREATE TABLE ${noise} (filler text)`);
        await waitFor(
          async () => {
            await setup.fixture.query(
              `INSERT INTO ${noise} SELECT repeat('x', 1000) FROM generate_series(1, 5000)`,
            );
            await setup.fixture.query('SELECT pg_switch_wal()');
            await setup.fixture.query('CHECKPOINT');
            const rows = await setup.fixture.query<{ wal_status: string }>(
              'SELECT wal_status FROM pg_replication_slots WHERE slot_name = $1',
              [setup.fixture.slot],
            );
            return rows[0]?.wal_status === 'lost';
          },
          { what: 'the slot to be invalidated', timeoutMs: 60_000, intervalMs: 200 },
        );
        relay.child.kill('SIGCONT');
        await relay.waitForLine(/replication slot was invalidated/);
        const after = await writeOrders(setup.fixture.schema, 200, 20);
        const committed = [...before.committed, ...during.committed, ...after.committed];
        const topic = await setup.reader();
        await topic.waitForIds(committed.map((e) => e.id));
        const report = reportDelivery(committed, topic.messages);
        assert.deepEqual(
          { lost: report.lost.length, reordered: report.reordered },
          { lost: 0, reordered: [] },
        );
      });
    } finally {
      await withClient((c) =>
        c.query('ALTER SYSTEM RESET max_slot_wal_keep_size').then(() => c.query('SELECT pg_reload_conf()')),
      );
    }
  });
});

/** Inserts `count` events one at a time and returns how long each took to arrive, sorted. */
async function measureLatencies(
  setup: Setup,
  topic: TopicReader,
  count: number,
  timeoutMs = 10_000,
): Promise<number[]> {
  const latencies: number[] = [];
  for (let i = 0; i < count; i++) {
    const [row] = await setup.fixture.query<{ id: string }>(
      `INSERT INTO ${setup.table} (aggregate_type, aggregate_id, event_type, payload) VALUES ('order', 'latency', 'ping', '{}') RETURNING id::text`,
    );
    const started = Date.now();
    await topic.waitForIds([row?.id ?? ''], timeoutMs);
    latencies.push(Date.now() - started);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return latencies.sort((a, b) => a - b);
}
