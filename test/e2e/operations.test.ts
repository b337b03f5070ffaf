import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { Kafka, logLevel, ConfigResourceTypes } from 'kafkajs';
import pg from 'pg';

import { writeOrders } from '../support/outboxWriter.js';
import { withRelaySetup } from '../support/relaySetup.js';
import { runCli } from '../support/runCli.js';
import { startBroker, startExtraPostgres, stopBroker } from '../support/stackControl.js';
import { requireKafkaBrokers, uniqueName, findFreePort } from '../support/testEnv.js';
import { waitFor } from '../support/waitFor.js';
import type { WalFixture } from '../support/walFixture.js';
import { createWalFixture } from '../support/walFixture.js';

/** Every metric name walbox documents (docs/operations.md). */
const SPEC_METRICS = [
  'outbox_events_published_total',
  'outbox_events_failed_total',
  'outbox_events_pending',
  'outbox_batch_duration_seconds',
  'outbox_events_dead_letters',
  'outbox_oldest_pending_age_seconds',
  'outbox_delivery_latency_seconds',
  'outbox_replication_slot_lag_bytes',
  'outbox_replication_slot_retained_wal_bytes',
  'outbox_replication_slot_active',
  'outbox_replication_slot_safe_wal_size_bytes',
  'outbox_replication_slot_wal_status',
  'outbox_relay_in_flight_events',
];

const STREAMING = /streaming from the replication slot/;

/** Samples of a Prometheus text exposition, by name with labels (e.g. `x{status="lost"}`). */
function parseMetrics(text: string): Map<string, number> {
  const samples = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line.startsWith('#') || line.trim() === '') continue;
    const cut = line.lastIndexOf(' ');
    samples.set(line.slice(0, cut), Number(line.slice(cut + 1)));
  }
  return samples;
}

async function scrape(port: number): Promise<Map<string, number>> {
  const response = await fetch(`http://127.0.0.1:${String(port)}/metrics`);
  assert.equal(response.status, 200);
  return parseMetrics(await response.text());
}

async function readyStatus(port: number): Promise<number> {
  try {
    return (await fetch(`http://127.0.0.1:${String(port)}/readyz`)).status;
  } catch {
    return 0;
  }
}

/** Flags of status, doctor and slot for a fixture. */
function commandArgs(fixture: WalFixture, ...extra: string[]): string[] {
  return [...tableArgs(fixture), '--slot', fixture.slot, '--publication', fixture.publication, ...extra];
}

/** Flags of dlq and cleanup, which act on the table only. */
function tableArgs(fixture: WalFixture, ...extra: string[]): string[] {
  return ['--database-url', fixture.databaseUrl, '--schema', fixture.schema, ...extra];
}

describe('operations', () => {
  it('/metrics exposes every documented metric with values that match the database', async () => {
    const port = await findFreePort();
    await withRelaySetup(
      async ({ fixture, reader, startRelay, table }) => {
        const relay = startRelay('--metrics-port', String(port));
        await relay.waitForLine(STREAMING);
        const written = await writeOrders(fixture.schema, 300, 20);
        const [huge] = await fixture.query<{ id: string }>(
          `INSERT INTO ${table} (aggregate_type, aggregate_id, event_type, payload)
           VALUES ('order', 'big-1', 'huge', jsonb_build_object('blob', repeat('x', 50000))) RETURNING id::text`,
        );
        const topic = await reader();
        await topic.waitForIds(written.committed.map((e) => e.id));
        // The gauges are sampled every few seconds: wait until they show the dead letter.
        let samples = new Map<string, number>();
        await waitFor(
          async () => {
            samples = await scrape(port);
            return (
              samples.get('outbox_events_dead_letters') === 1 && samples.get('outbox_events_pending') === 0
            );
          },
          { what: 'metrics showing one dead letter and nothing pending', timeoutMs: 30_000 },
        );
        const names = new Set(
          [...samples.keys()].map((k) => k.replace(/\{.*$/, '').replace(/_(bucket|sum|count)$/, '')),
        );
        for (const name of SPEC_METRICS) assert.ok(names.has(name), `${name} is missing from /metrics`);
        assert.ok(names.has('process_cpu_seconds_total'), 'process metrics are missing');

        const [db] = await fixture.query<{ pending: string; dead: string; lag: string }>(
          `SELECT (SELECT count(*) FROM ${table} WHERE processed_at IS NULL AND dead_lettered_at IS NULL)::text AS pending,
                  (SELECT count(*) FROM ${table} WHERE dead_lettered_at IS NOT NULL AND processed_at IS NULL)::text AS dead,
                  (SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), confirmed_flush_lsn) FROM pg_replication_slots
                    WHERE slot_name = $1)::text AS lag`,
          [fixture.slot],
        );
        assert.equal(samples.get('outbox_events_pending'), Number(db?.pending));
        assert.equal(samples.get('outbox_events_dead_letters'), Number(db?.dead));
        assert.equal(samples.get('outbox_events_published_total'), 300);
        assert.equal(samples.get('outbox_events_failed_total{event_type="huge"}'), 1);
        assert.equal(samples.get('outbox_delivery_latency_seconds_count'), 300);
        assert.equal(samples.get('outbox_replication_slot_active'), 1);
        assert.equal(samples.get('outbox_replication_slot_wal_status{status="reserved"}'), 1);
        assert.equal(samples.get('outbox_replication_slot_wal_status{status="lost"}'), 0);
        assert.equal(samples.get('outbox_relay_in_flight_events'), 0);
        // Both sides move with unrelated WAL (other tests, checkpoints): compare within 1 MiB.
        const lag = samples.get('outbox_replication_slot_lag_bytes') ?? Number.NaN;
        assert.ok(
          Math.abs(lag - Number(db?.lag)) < 1024 * 1024,
          `slot lag ${String(lag)} vs ${String(db?.lag)}`,
        );
        assert.ok((samples.get('outbox_replication_slot_retained_wal_bytes') ?? 0) > 0);
        assert.ok(huge !== undefined);

        const health = await fetch(`http://127.0.0.1:${String(port)}/healthz`);
        assert.equal(health.status, 200);
        assert.equal(await readyStatus(port), 200);
      },
      { topic: { config: { 'max.message.bytes': '20000' } } },
    );
  });

  it('/readyz fails within 10 s of the broker stopping, and recovers when it is back', async () => {
    const port = await findFreePort();
    await withRelaySetup(async ({ startRelay }) => {
      const relay = startRelay('--metrics-port', String(port));
      await relay.waitForLine(STREAMING);
      await waitFor(async () => (await readyStatus(port)) === 200, {
        what: '/readyz 200',
        timeoutMs: 30_000,
      });
      await stopBroker();
      const stopped = Date.now();
      try {
        // The relay is idle: only its health probe can notice.
        await waitFor(async () => (await readyStatus(port)) === 503, {
          what: '/readyz 503 within 10 s of the broker stopping',
          timeoutMs: 10_000,
          intervalMs: 250,
        });
        console.log(`/readyz turned 503 ${String(Date.now() - stopped)} ms after the broker stopped`);
        const body = (await (await fetch(`http://127.0.0.1:${String(port)}/readyz`)).json()) as {
          ready: boolean;
          failing: Record<string, string>;
        };
        assert.equal(body.ready, false);
        assert.ok('kafka' in body.failing, JSON.stringify(body));
      } finally {
        await startBroker();
      }
      const restarted = Date.now();
      await waitFor(async () => (await readyStatus(port)) === 200, {
        what: '/readyz 200 again after the broker restarted',
        timeoutMs: 60_000,
      });
      console.log(`/readyz turned 200 ${String(Date.now() - restarted)} ms after the broker was back`);
    });
  });

  it('status --json has the documented shape, and exits 3 once the relay is gone', async () => {
    await withRelaySetup(async ({ fixture, startRelay }) => {
      const relay = startRelay();
      await relay.waitForLine(STREAMING);
      await writeOrders(fixture.schema, 50, 5);
      await waitFor(
        async () => {
          const r = await runCli(['status', '--json', ...commandArgs(fixture)]);
          return r.code === 0;
        },
        { what: 'a healthy status', timeoutMs: 30_000 },
      );
      const healthy = await runCli(['status', '--json', ...commandArgs(fixture)]);
      assert.equal(healthy.code, 0, healthy.stderr);
      const report = JSON.parse(healthy.stdout) as Record<string, unknown>;
      assert.deepEqual(Object.keys(report).sort(), [
        'database',
        'healthy',
        'mode',
        'outbox',
        'problems',
        'slot',
        'table',
      ]);
      assert.equal(report['healthy'], true);
      assert.equal(report['mode'], 'wal');
      assert.deepEqual(report['problems'], []);
      const slot = report['slot'] as Record<string, unknown>;
      assert.deepEqual(Object.keys(slot).sort(), [
        'active',
        'activePid',
        'activeReader',
        'confirmedFlushLsn',
        'exists',
        'failover',
        'lagBytes',
        'plugin',
        'restartLsn',
        'retainedWalBytes',
        'safeWalSizeBytes',
        'slot',
        'walStatus',
      ]);
      assert.equal(slot['exists'], true);
      assert.equal(slot['active'], true);
      assert.equal(slot['walStatus'], 'reserved');
      // Which relay streams (with standby relays, the active one): its walsender's connection.
      const reader = slot['activeReader'] as Record<string, unknown>;
      assert.deepEqual(Object.keys(reader).sort(), ['applicationName', 'backendStart', 'clientAddr', 'pid']);
      assert.equal(reader['pid'], slot['activePid']);
      assert.equal(reader['applicationName'], 'walbox');
      assert.equal(reader['clientAddr'], '127.0.0.1');
      assert.ok(!Number.isNaN(Date.parse(String(reader['backendStart']))));
      assert.equal(typeof slot['lagBytes'], 'number');
      assert.equal(typeof slot['retainedWalBytes'], 'number');
      assert.deepEqual(report['outbox'], { pending: 0, oldestPendingAgeSeconds: 0, deadLetters: 0 });
      assert.doesNotMatch(healthy.stdout, /walbox-test-secret/);

      const human = await runCli(['status', ...commandArgs(fixture)]);
      assert.equal(human.code, 0, human.stderr);
      assert.match(human.stdout, /lag\s+\d+(\.\d)? (B|KiB|MiB)/);
      assert.match(human.stdout, /health\s+OK/);
      assert.match(
        human.stdout,
        /active relay\s+walbox from 127\.0\.0\.1 \(pid \d+, connected [\dsmhd ]+ ago\)/,
      );

      await relay.stop('SIGTERM');
      const down = await runCli(['status', '--json', ...commandArgs(fixture)]);
      assert.equal(down.code, 3, down.stdout);
      const downReport = JSON.parse(down.stdout) as { healthy: boolean; problems: string[] };
      assert.equal(downReport.healthy, false);
      assert.match(downReport.problems.join('\n'), /is not active/);
    });
  });

  it('doctor lists wal_level=replica and a role without REPLICATION, each with its fix (exit 3)', async () => {
    const replica = await startExtraPostgres({ wal_level: 'replica' });
    try {
      const migrated = await runCli(['migrate', '--database-url', replica.url]);
      assert.equal(migrated.code, 0, migrated.stderr);
      const admin = new pg.Client({ connectionString: replica.url });
      await admin.connect();
      const role = uniqueName('norepl');
      try {
        await admin.query(`CREATE ROLE ${role} LOGIN PASSWORD 'doctor-secret'`);
        await admin.query(`GRANT SELECT, UPDATE ON public.outbox_events TO ${role}`);
      } finally {
        await admin.end();
      }
      const url = new URL(replica.url);
      url.username = role;
      url.password = 'doctor-secret';
      const result = await runCli(
        ['doctor', '--database-url', url.toString(), '--kafka-brokers', requireKafkaBrokers().join(',')],
        { timeoutMs: 90_000 },
      );
      assert.equal(result.code, 3, result.stdout + result.stderr);
      assert.match(result.stdout, /^FAIL {2}wal_level: .*ALTER SYSTEM SET wal_level = logical/m);
      assert.match(
        result.stdout,
        new RegExp(`^FAIL {2}replication privilege: .*ALTER ROLE "${role}" REPLICATION`, 'm'),
      );
      assert.match(result.stdout, /^PASS {2}outbox table/m);
      assert.match(result.stdout, /^PASS {2}kafka/m);
      assert.doesNotMatch(result.stdout + result.stderr, /doctor-secret/);
    } finally {
      await replica.stop();
    }
  });

  it('dlq list shows a dead letter and dlq retry re-delivers it to Kafka', async () => {
    await withRelaySetup(
      async ({ fixture, reader, startRelay, table }) => {
        const relay = startRelay();
        await relay.waitForLine(STREAMING);
        const [row] = await fixture.query<{ id: string }>(
          `INSERT INTO ${table} (aggregate_type, aggregate_id, event_type, payload)
           VALUES ('order', 'big-1', 'huge', jsonb_build_object('blob', repeat('x', 50000))) RETURNING id::text`,
        );
        const id = row?.id ?? '';
        await waitFor(
          async () => {
            const r = await runCli(['dlq', 'list', '--json', ...tableArgs(fixture)]);
            return (JSON.parse(r.stdout) as { id: string }[]).some((l) => l.id === id);
          },
          { what: 'the dead letter listed', timeoutMs: 30_000 },
        );
        const listed = await runCli(['dlq', 'list', ...tableArgs(fixture)]);
        assert.match(
          listed.stdout,
          new RegExp(`${id} .* order/big-1 {2}huge .*exceeds max\\.message\\.bytes`),
        );

        // The operator raises the topic's limit, then re-delivers.
        const kafka = new Kafka({ brokers: requireKafkaBrokers(), logLevel: logLevel.NOTHING });
        const admin = kafka.admin();
        await admin.connect();
        try {
          await admin.alterConfigs({
            validateOnly: false,
            resources: [
              {
                type: ConfigResourceTypes.TOPIC,
                name: fixture.topicFor('order'),
                configEntries: [{ name: 'max.message.bytes', value: '1048588' }],
              },
            ],
          });
        } finally {
          await admin.disconnect();
        }
        const bad = await runCli(['dlq', 'retry', 'not-a-uuid', ...tableArgs(fixture)]);
        assert.equal(bad.code, 2, bad.stderr);
        const retried = await runCli([
          'dlq',
          'retry',
          id,
          ...tableArgs(fixture, '--kafka-brokers', requireKafkaBrokers().join(','), '--topic-template'),
          `${fixture.topicPrefix}.{aggregate_type}`,
        ]);
        assert.equal(retried.code, 0, retried.stdout + retried.stderr);
        assert.match(retried.stdout, /re-delivered 1 events/);
        const topic = await reader();
        await topic.waitForIds([id]);
        const message = topic.messages.find((m) => m.headers['id'] === id);
        assert.equal(message?.key, 'big-1');
        const [after] = await fixture.query<{ processed: boolean }>(
          `SELECT processed_at IS NOT NULL AS processed FROM ${table} WHERE id = $1`,
          [id],
        );
        assert.equal(after?.processed, true);
        const empty = await runCli(['dlq', 'list', '--json', ...tableArgs(fixture)]);
        assert.deepEqual(JSON.parse(empty.stdout), []);
        // The event is processed now: naming it again is a failed precondition, not a silent success.
        const again = await runCli(['dlq', 'purge', id, ...tableArgs(fixture)]);
        assert.equal(again.code, 3, again.stdout + again.stderr);
        assert.match(again.stderr, new RegExp(`not dead letters \\(unknown, pending or processed\\): ${id}`));
      },
      { topic: { config: { 'max.message.bytes': '20000' } } },
    );
  });

  it('cleanup deletes old processed rows only; dead letters only when asked; pending never', async () => {
    const fixture = await createWalFixture();
    try {
      const table = `${pg.escapeIdentifier(fixture.schema)}.outbox_events`;
      const insert = async (label: string, set: string): Promise<void> => {
        await fixture.query(
          `INSERT INTO ${table} (aggregate_type, aggregate_id, event_type, payload) VALUES ('order', $1, 'e', '{}')`,
          [label],
        );
        if (set !== '') await fixture.query(`UPDATE ${table} SET ${set} WHERE aggregate_id = $1`, [label]);
      };
      await insert(
        'old-processed',
        `created_at = now() - interval '9 days', processed_at = now() - interval '8 days'`,
      );
      await insert('new-processed', `processed_at = now() - interval '1 day'`);
      await insert('old-pending', `created_at = now() - interval '9 days'`);
      await insert('old-dead', `dead_lettered_at = now() - interval '8 days', last_error = 'x'`);
      const left = async (): Promise<string[]> =>
        (await fixture.query<{ a: string }>(`SELECT aggregate_id AS a FROM ${table} ORDER BY 1`)).map(
          (r) => r.a,
        );

      const first = await runCli(['cleanup', '--older-than', '7d', '--batch', '1', ...tableArgs(fixture)]);
      assert.equal(first.code, 0, first.stderr);
      assert.match(first.stdout, /deleted 1 rows/);
      assert.deepEqual(await left(), ['new-processed', 'old-dead', 'old-pending']);

      const second = await runCli([
        'cleanup',
        '--older-than',
        '7d',
        '--include-dead-letters',
        ...tableArgs(fixture),
      ]);
      assert.equal(second.code, 0, second.stderr);
      assert.deepEqual(await left(), ['new-processed', 'old-pending']);

      const bad = await runCli(['cleanup', '--older-than', 'soon', ...tableArgs(fixture)]);
      assert.equal(bad.code, 2);
      assert.match(bad.stderr, /--older-than "soon" is not a duration/);
    } finally {
      await fixture.cleanUp();
    }
  });

  it('slot create, info and drop manage the slot; drop refuses a slot in use', async () => {
    const fixture = await createWalFixture();
    try {
      const created = await runCli(['slot', 'create', ...commandArgs(fixture)]);
      assert.equal(created.code, 0, created.stderr);
      const failoverSlots = Number(process.env['TEST_PG_VERSION'] ?? '15') >= 17;
      assert.match(
        created.stdout,
        failoverSlots ? /created slot_\w+ \(pgoutput, failover\)/ : /created slot_\w+ \(pgoutput\)\n/,
      );
      const info = await runCli(['slot', 'info', '--json', ...commandArgs(fixture)]);
      const status = JSON.parse(info.stdout) as {
        exists: boolean;
        active: boolean;
        plugin: string;
        failover: boolean | null;
      };
      assert.deepEqual([status.exists, status.active, status.plugin], [true, false, 'pgoutput']);
      // --slot-failover auto: a failover slot where the server has them (17+), no such column before.
      assert.equal(status.failover, failoverSlots ? true : null);
      const human = await runCli(['slot', 'info', ...commandArgs(fixture)]);
      assert.match(human.stdout, failoverSlots ? /failover\s+yes/ : /failover\s+— \(PostgreSQL 17\+\)/);
      const dropped = await runCli(['slot', 'drop', ...commandArgs(fixture)]);
      assert.equal(dropped.code, 0, dropped.stderr);
      const gone = await fixture.query('SELECT 1 FROM pg_replication_slots WHERE slot_name = $1', [
        fixture.slot,
      ]);
      assert.equal(gone.length, 0);
    } finally {
      await fixture.cleanUp();
    }
    await withRelaySetup(async ({ fixture, startRelay }) => {
      const relay = startRelay();
      await relay.waitForLine(STREAMING);
      const refused = await runCli(['slot', 'drop', ...commandArgs(fixture)]);
      assert.equal(refused.code, 3, refused.stdout);
      assert.match(refused.stderr, /is in use by pid \d+: stop the relay first/);
    });
  });
});
