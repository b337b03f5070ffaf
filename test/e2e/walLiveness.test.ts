import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import pg from 'pg';

import { writeOrders, type WrittenEvent } from '../support/outboxWriter.js';
import { assertAllDelivered } from '../support/deliveryReport.js';
import type { RelayProcess } from '../support/relayProcess.js';
import { countProcessed, withRelaySetup, type RelaySetup } from '../support/relaySetup.js';
import { runCli } from '../support/runCli.js';
import { restartPostgres, startBroker, stopBroker } from '../support/stackControl.js';
import { TcpProxy } from '../support/tcpProxy.js';
import { withClient } from '../support/testDatabase.js';
import { uniqueName } from '../support/testEnv.js';
import { waitFor } from '../support/waitFor.js';

const STREAMING = /streaming from the replication slot/;

async function countWalsenders(): Promise<number> {
  return withClient(async (client) => {
    const { rows } = await client.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM pg_stat_activity WHERE backend_type = 'walsender'",
    );
    return rows[0]?.n ?? 0;
  });
}

/** The URL of the stack's database with its port replaced (to go through a proxy). */
function withPort(url: string, port: number): string {
  const parsed = new URL(url);
  parsed.port = String(port);
  return parsed.toString();
}

function databasePort(url: string): number {
  return Number(new URL(url).port);
}

/** The flags `walbox dlq` needs for the setup's outbox. */
function dlqArgs(setup: RelaySetup): string[] {
  return ['--database-url', setup.fixture.databaseUrl, '--schema', setup.fixture.schema];
}

/** The relay's exit, or 'hung' when it is still running after `ms`. */
function exitWithin(
  relay: RelayProcess,
  ms: number,
): Promise<{ code: number | null; signal: NodeJS.Signals | null } | 'hung'> {
  return Promise.race([
    relay.exited,
    new Promise<'hung'>((resolve) => setTimeout(() => resolve('hung'), ms)),
  ]);
}

const STANDING_BY = /another relay holds the replication slot \(pid \d+\): standing by/;

describe('WAL mode liveness under faults', () => {
  it('a relay waiting for a held slot keeps no walsenders, takes over when the active one dies, and exits 0 on SIGTERM', async (t) => {
    await withRelaySetup(async (setup) => {
      const active = setup.startRelay();
      await active.waitForLine(STREAMING);
      const baseline = await countWalsenders();
      const waiting = setup.startRelay('--retry-backoff-max', '2s');
      // It used to ask for the slot again and again (each refused START_REPLICATION left a walsender behind);
      // now it is refused once, then watches the slot with a query until it is free.
      await waiting.waitForLine(STANDING_BY);
      let most = baseline;
      const until = Date.now() + 15_000;
      while (Date.now() < until) {
        most = Math.max(most, await countWalsenders());
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
      const refusals = waiting.lines.filter((l) => /replication interrupted; reconnecting/.test(l)).length;
      t.diagnostic(`waiting relay: ${refusals} warnings in 15 s, walsenders ${baseline} → at most ${most}`);
      assert.equal(waiting.lines.filter((l) => STANDING_BY.test(l)).length, 1, 'said once that it stands by');
      assert.equal(refusals, 0, 'standing by is not an outage');
      assert.ok(most <= baseline, `no walsender of its own while it waits: ${most} (baseline ${baseline})`);

      active.child.kill('SIGKILL');
      await active.exited;
      const written = await writeOrders(setup.fixture.schema, 200, 20);
      await waiting.waitForLine(STREAMING, 30_000);
      await waiting.waitForLine(/took over the replication slot/);
      await assertAllDelivered(setup, written.committed, 0);

      const stoppedAt = Date.now();
      waiting.child.kill('SIGTERM');
      const exit = await exitWithin(waiting, 20_000);
      t.diagnostic(`the relay that took over exited ${Date.now() - stoppedAt} ms after SIGTERM`);
      assert.deepEqual(exit, { code: 0, signal: null });
    });
  });

  it('lets a PostgreSQL fast shutdown finish while published events wait for a stopped broker', async (t) => {
    await withRelaySetup(async (setup) => {
      const relay = setup.startRelay();
      await relay.waitForLine(STREAMING);
      const first = await writeOrders(setup.fixture.schema, 100, 10);
      await waitFor(async () => (await countProcessed(setup.fixture)) === 100, { what: 'first events' });
      await stopBroker();
      let pending: WrittenEvent[] = [];
      try {
        pending = (await writeOrders(setup.fixture.schema, 100, 10)).committed;
        await relay.waitForLine(/publish to Kafka failed; retrying/, 60_000);
        // The walsender waits for a flush position the relay cannot reach (marking needs the stopping server):
        // pg_ctl gives up after its 60 s unless the relay lets go.
        const stoppingAt = Date.now();
        await restartPostgres('fast');
        t.diagnostic(`pg_ctl restart -m fast took ${Date.now() - stoppingAt} ms with events in flight`);
        // The relay's output was not read while pg_ctl ran (it blocks this process): read it now.
        await relay.waitForLine(/server is shutting down/, 10_000);
      } finally {
        await startBroker();
      }
      await waitFor(() => relay.lines.filter((l) => STREAMING.test(l)).length >= 2, {
        timeoutMs: 90_000,
        what: 'streaming again after the restart',
      });
      await assertAllDelivered(setup, [...first.committed, ...pending], pending.length);
      await waitFor(async () => (await countProcessed(setup.fixture)) === 200, { what: 'all marked' });
      assert.equal(relay.child.exitCode, null, 'the same relay process went on');
    });
  });

  it('reports a failed step at once on a quiet stream (UPDATE revoked), not at the next stream item', async (t) => {
    // A role of its own: the test role is a superuser, which no REVOKE affects.
    const role = uniqueName('quiet');
    await withRelaySetup(async (setup) => {
      const schema = pg.escapeIdentifier(setup.fixture.schema);
      await setup.fixture.query(`CREATE ROLE ${role} LOGIN REPLICATION PASSWORD 'quiet-secret'`);
      await setup.fixture.query(`GRANT USAGE ON SCHEMA ${schema} TO ${role}`);
      await setup.fixture.query(`GRANT ALL ON ALL TABLES IN SCHEMA ${schema} TO ${role}`);
      const url = new URL(setup.fixture.databaseUrl);
      url.username = role;
      url.password = 'quiet-secret';
      // A long status interval: no reply requests that would bring a stream item along within the test.
      const relay = setup.startRelay('--database-url', url.toString(), '--status-interval', '25s');
      await relay.waitForLine(STREAMING);
      const first = await writeOrders(setup.fixture.schema, 1, 1);
      await (await setup.reader()).waitForIds(first.committed.map((e) => e.id));
      await setup.fixture.query(`REVOKE UPDATE ON ${setup.table} FROM ${role}`);
      // The refused UPDATE writes no WAL: nothing more comes on the stream after the insert's commit.
      const insertedAt = Date.now();
      await writeOrders(setup.fixture.schema, 1, 1);
      await waitFor(() => relay.child.exitCode !== null, {
        timeoutMs: 3_000,
        what: 'the relay to report the refused mark',
      });
      t.diagnostic(
        `refused mark reported and the relay exited ${Date.now() - insertedAt} ms after the insert`,
      );
      assert.equal(relay.child.exitCode, 1);
      assert.ok(
        relay.lines.some((l) => /mark rows processed.*permission denied/.test(l)),
        relay.lines.slice(-5).join('\n'),
      );
    });
    await withClient((client) => client.query(`DROP ROLE IF EXISTS ${role}`)).catch(() => undefined);
  });

  it('replaces a half-open replication connection (packets held, nothing closed)', async (t) => {
    await withRelaySetup(async (setup) => {
      const proxy = await TcpProxy.start(databasePort(setup.fixture.databaseUrl));
      try {
        const relay = setup.startRelay(
          '--database-url',
          withPort(setup.fixture.databaseUrl, proxy.port),
          '--database-timeout',
          '3s',
        );
        await relay.waitForLine(STREAMING);
        const before = await writeOrders(setup.fixture.schema, 50, 5);
        await waitFor(async () => (await countProcessed(setup.fixture)) === 50, { what: 'first events' });
        const frozenAt = Date.now();
        proxy.freezeOpenConnections();
        const after = await writeOrders(setup.fixture.schema, 50, 5);
        await waitFor(() => relay.lines.filter((l) => STREAMING.test(l)).length >= 2, {
          timeoutMs: 60_000,
          what: 'a new replication connection',
        });
        t.diagnostic(
          `streaming again ${Date.now() - frozenAt} ms after the path went silent (--database-timeout 3s)`,
        );
        assert.ok(relay.lines.some((l) => /nothing received on the replication connection/.test(l)));
        await assertAllDelivered(setup, [...before.committed, ...after.committed], 50);
      } finally {
        await proxy.close();
      }
    });
  });

  it('stops on a SIGTERM that arrives while the replication connection is being set up', async (t) => {
    await withRelaySetup(async (setup) => {
      const proxy = await TcpProxy.start(databasePort(setup.fixture.databaseUrl));
      // Every chunk takes 150 ms each way: connecting and START_REPLICATION take about a second after the
      // relay says it starts replication, and the signal lands in between.
      proxy.setDelay(150);
      try {
        const relay = setup.startRelay(
          '--database-url',
          withPort(setup.fixture.databaseUrl, proxy.port),
          '--startup-timeout',
          '120s',
          '--log-level',
          'debug',
        );
        await relay.waitForLine(/starting replication/);
        const stoppedAt = Date.now();
        relay.child.kill('SIGTERM');
        const exit = await exitWithin(relay, 60_000);
        t.diagnostic(`exited ${Date.now() - stoppedAt} ms after a SIGTERM during the replication connect`);
        const streamingAt = relay.lines.findIndex((l) => STREAMING.test(l));
        const signalAt = relay.lines.findIndex((l) => /stopping: draining/.test(l));
        assert.ok(
          signalAt >= 0 && (streamingAt < 0 || signalAt < streamingAt),
          'the signal came during the connect',
        );
        assert.deepEqual(exit, { code: 0, signal: null });
      } finally {
        await proxy.close();
      }
    });
  });

  it('enforces --shutdown-timeout while a database call is in flight', async (t) => {
    await withRelaySetup(async (setup) => {
      const schema = setup.table.split('.')[0] ?? '';
      const relay = setup.startRelay('--shutdown-timeout', '2s');
      await relay.waitForLine(STREAMING);
      // The mark waits (as behind a lock) far longer than the shutdown timeout.
      await setup.fixture.query(`
        CREATE FUNCTION ${schema}.slow_update() RETURNS trigger LANGUAGE plpgsql AS
          $$ BEGIN PERFORM pg_sleep(120); RETURN NEW; END $$;
        CREATE TRIGGER slow_update BEFORE UPDATE ON ${setup.table}
          FOR EACH ROW EXECUTE FUNCTION ${schema}.slow_update()`);
      try {
        const written = await writeOrders(setup.fixture.schema, 1, 1);
        const topic = await setup.reader();
        await topic.waitForIds(written.committed.map((e) => e.id));
        await waitFor(
          async () =>
            (
              await setup.fixture.query<{ n: number }>(
                "SELECT count(*)::int AS n FROM pg_stat_activity WHERE query LIKE 'UPDATE%' AND wait_event = 'PgSleep'",
              )
            )[0]?.n === 1,
          { what: 'the mark to be under way' },
        );
        const stoppedAt = Date.now();
        relay.child.kill('SIGTERM');
        const exit = await exitWithin(relay, 30_000);
        t.diagnostic(`exited ${Date.now() - stoppedAt} ms after SIGTERM with --shutdown-timeout 2s`);
        assert.deepEqual(exit, { code: 1, signal: null });
        assert.ok(relay.lines.some((l) => /shutdown-timeout/.test(l)));
      } finally {
        await setup.fixture.query(
          "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE wait_event = 'PgSleep' AND query LIKE 'UPDATE%'",
        );
      }
    });
  });
  it('dead-letters a row with a NULL where a value is needed and goes on (no crash in the socket listener)', async () => {
    await withRelaySetup(async (setup) => {
      await setup.fixture.query(`ALTER TABLE ${setup.table} ALTER COLUMN aggregate_id DROP NOT NULL`);
      const relay = setup.startRelay();
      await relay.waitForLine(STREAMING);
      const [broken] = await setup.fixture.query<{ id: string }>(
        `INSERT INTO ${setup.table} (aggregate_type, aggregate_id, event_type, payload)
         VALUES ('order', NULL, 'created', '{}') RETURNING id::text`,
      );
      const after = await writeOrders(setup.fixture.schema, 5, 1);
      await assertAllDelivered(setup, after.committed, 0);
      const rows = await setup.fixture.query<{ dead: boolean; last_error: string | null }>(
        `SELECT dead_lettered_at IS NOT NULL AS dead, last_error FROM ${setup.table} WHERE id = $1`,
        [broken?.id],
      );
      assert.deepEqual(rows, [{ dead: true, last_error: 'column aggregate_id is NULL' }]);
      assert.equal(relay.child.exitCode, null);
    });
  });

  it('publishes a large event that fits max.message.bytes once compressed (--compression gzip)', async () => {
    await withRelaySetup(
      async (setup) => {
        const relay = setup.startRelay('--compression', 'gzip');
        await relay.waitForLine(STREAMING);
        const [large] = await setup.fixture.query<{ id: string }>(
          `INSERT INTO ${setup.table} (aggregate_type, aggregate_id, event_type, payload)
           VALUES ('order', 'o-1', 'created', jsonb_build_object('blob', repeat('x', 60000))) RETURNING id::text`,
        );
        const topic = await setup.reader();
        await topic.waitForIds([large?.id ?? '']);
        const rows = await setup.fixture.query<{ processed: boolean }>(
          `SELECT processed_at IS NOT NULL AS processed FROM ${setup.table} WHERE id = $1`,
          [large?.id],
        );
        assert.deepEqual(rows, [{ processed: true }]);
      },
      { topic: { config: { 'max.message.bytes': '20000' } } },
    );
  });
  it('an event whose topic is missing holds up the stream until an operator skips it, without a restart', async (t) => {
    await withRelaySetup(async (setup) => {
      const relay = setup.startRelay();
      await relay.waitForLine(STREAMING);
      // No topic for aggregate type "invoice": its event is retried, and everything behind it waits (order).
      const [stuck] = await setup.fixture.query<{ id: string }>(
        `INSERT INTO ${setup.table} (aggregate_type, aggregate_id, event_type, payload)
         VALUES ('invoice', 'i-1', 'created', '{}') RETURNING id::text`,
      );
      const behind = await writeOrders(setup.fixture.schema, 10, 2);
      await relay.waitForLine(/does not exist.*publish to Kafka failed; retrying/);
      assert.equal(await countProcessed(setup.fixture), 0, 'nothing overtakes the stuck event');
      const skippedAt = Date.now();
      const skip = await runCli(['dlq', 'skip', stuck?.id ?? '', ...dlqArgs(setup)]);
      assert.equal(skip.code, 0, skip.stderr);
      await assertAllDelivered(setup, behind.committed, 0);
      t.diagnostic(`the stream went on ${Date.now() - skippedAt} ms after walbox dlq skip`);
      const rows = await setup.fixture.query<{ dead: boolean; last_error: string | null }>(
        `SELECT dead_lettered_at IS NOT NULL AS dead, last_error FROM ${setup.table} WHERE id = $1`,
        [stuck?.id],
      );
      assert.deepEqual(rows, [{ dead: true, last_error: 'skipped by an operator (walbox dlq skip)' }]);
      assert.equal(relay.child.exitCode, null, 'the same relay process went on');
      const again = await runCli(['dlq', 'skip', stuck?.id ?? '', ...dlqArgs(setup)]);
      assert.equal(again.code, 3, 'an event that is not pending cannot be skipped');
      assert.match(again.stderr, /not pending/);
    });
  });
});
