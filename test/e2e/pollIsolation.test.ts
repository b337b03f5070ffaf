import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import pg from 'pg';

import { withRelaySetup, type RelaySetup } from '../support/relaySetup.js';
import { runCli } from '../support/runCli.js';
import { withClient } from '../support/testDatabase.js';
import { findFreePort, uniqueName } from '../support/testEnv.js';
import { waitFor } from '../support/waitFor.js';

const POLLING = /polling the outbox/;

interface RowState {
  id: string;
  aggregate_type: string;
  attempts: number;
  processed: boolean;
  dead: boolean;
  last_error: string | null;
}

async function readRows(setup: RelaySetup): Promise<RowState[]> {
  return setup.fixture.query<RowState>(
    `SELECT id::text, aggregate_type, attempts, processed_at IS NOT NULL AS processed,
            dead_lettered_at IS NOT NULL AS dead, last_error
       FROM ${setup.table} ORDER BY seq`,
  );
}

/** One transaction, so that the rows share a claim: `count` events per aggregate type, interleaved. */
async function insertInterleaved(setup: RelaySetup, types: readonly string[], count: number): Promise<void> {
  await setup.fixture.query(
    `INSERT INTO ${setup.table} (aggregate_type, aggregate_id, event_type, payload)
     SELECT t, t || '-' || (g % 5), 'created', jsonb_build_object('n', g)
       FROM generate_series(1, $2::int) AS g, unnest($1::text[]) AS t
      ORDER BY g, t`,
    [types, count],
  );
}

async function readyz(port: number): Promise<{ status: number; body: string }> {
  const response = await fetch(`http://127.0.0.1:${port}/readyz`);
  return { status: response.status, body: await response.text() };
}

describe('poll mode failure isolation', () => {
  it('a missing topic costs only its own events attempts; readiness stays failed while they wait', async (t) => {
    await withRelaySetup(async (setup) => {
      const port = await findFreePort();
      // Events of type "invoice" go to a topic that does not exist (and is not created).
      const relay = setup.startRelay(
        '--mode',
        'poll',
        '--poll-interval',
        '200ms',
        '--max-attempts',
        '4',
        '--retry-backoff-initial',
        '3s',
        '--metrics-port',
        String(port),
      );
      await relay.waitForLine(POLLING);
      await insertInterleaved(setup, ['order', 'invoice'], 40);
      await waitFor(
        async () =>
          (await readRows(setup)).filter((r) => r.aggregate_type === 'order' && r.processed).length === 40,
        { what: 'every order event delivered' },
      );
      // Empty polls follow while the invoice rows wait for their retry: they must not say the pipeline is fine.
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      const waiting = await readyz(port);
      t.diagnostic(`/readyz while the invoice rows wait: ${waiting.status} ${waiting.body}`);
      assert.equal(waiting.status, 503);
      await waitFor(
        async () =>
          (await readRows(setup)).filter((r) => r.aggregate_type === 'invoice' && r.dead).length === 40,
        { timeoutMs: 60_000, what: 'the invoice events dead-lettered after their attempts' },
      );
      const rows = await readRows(setup);
      const orders = rows.filter((r) => r.aggregate_type === 'order');
      assert.deepEqual(
        orders.map((r) => ({ attempts: r.attempts, dead: r.dead })),
        orders.map(() => ({ attempts: 0, dead: false })),
        'no order event paid for the missing topic',
      );
      for (const row of rows.filter((r) => r.aggregate_type === 'invoice')) {
        assert.equal(row.attempts, 4);
        assert.match(row.last_error ?? '', /does not exist/);
      }
      const topic = await setup.reader();
      await topic.waitForIds(orders.map((r) => r.id));
      assert.equal(topic.messages.length, 40, 'each order event once');
    });
  });

  it('refuses to start with a --dlq-topic that does not exist (exit 3, one line)', async () => {
    await withRelaySetup(async (setup) => {
      const missing = `${setup.fixture.topicPrefix}.no-such-dlq`;
      const result = await runCli([
        'run',
        ...setup.fixture.relayArgs('--mode', 'poll', '--dlq-topic', missing),
      ]);
      assert.equal(result.code, 3, result.stderr);
      assert.equal(result.stderr.trim().split('\n').length, 1, result.stderr);
      assert.match(
        result.stderr,
        /--dlq-topic \S+: the topic does not exist: create it, or run walbox with --create-topics/,
      );
    });
  });

  it('a dead-letter topic that fails does not re-publish the batch: the rest is marked, the rejected rows retried', async () => {
    await withRelaySetup(
      async (setup) => {
        const dlq = `${setup.fixture.topicPrefix}.dead`;
        await setup.fixture.createTopic(dlq, { partitions: 1 });
        const relay = setup.startRelay(
          '--mode',
          'poll',
          '--poll-interval',
          '200ms',
          '--max-attempts',
          '3',
          '--retry-backoff-initial',
          '500ms',
          '--dlq-topic',
          dlq,
        );
        await relay.waitForLine(POLLING);
        await setup.fixture.deleteTopic(dlq);
        const poison = await setup.fixture.query<{ id: string }>(
          `INSERT INTO ${setup.table} (aggregate_type, aggregate_id, event_type, payload)
           VALUES ('order', 'poison', 'huge', jsonb_build_object('blob', repeat('x', 50000)))
           RETURNING id::text`,
        );
        await insertInterleaved(setup, ['order'], 20);
        await waitFor(
          async () => (await readRows(setup)).find((r) => r.id === poison[0]?.id)?.dead === true,
          { timeoutMs: 60_000, what: 'the poison row dead-lettered after its attempts' },
        );
        const rows = await readRows(setup);
        const poisonRow = rows.find((r) => r.id === poison[0]?.id);
        assert.ok(poisonRow !== undefined);
        assert.equal(poisonRow.attempts, 3);
        assert.match(poisonRow.last_error ?? '', /copy to the dead-letter topic failed/);
        const others = rows.filter((r) => r.id !== poison[0]?.id);
        assert.ok(others.every((r) => r.processed && r.attempts === 0));
        const topic = await setup.reader();
        await topic.waitForIds(others.map((r) => r.id));
        // Give re-publication (the old failure: every poll sent the batch again) time to show.
        await new Promise((resolve) => setTimeout(resolve, 2_000));
        assert.equal(topic.messages.length, others.length, 'each delivered event once');
      },
      { topic: { config: { 'max.message.bytes': '20000' } } },
    );
  });

  it('a hot aggregate waiting for a retry does not starve the others', async () => {
    await withRelaySetup(
      async (setup) => {
        // 600 rows of one aggregate (more than the 4 × batch candidate window), its head waiting for a retry.
        await setup.fixture.query(
          `INSERT INTO ${setup.table} (aggregate_type, aggregate_id, event_type, payload)
           SELECT 'order', 'hot', 'created', jsonb_build_object('n', g) FROM generate_series(1, 600) AS g`,
        );
        await setup.fixture.query(
          `UPDATE ${setup.table} SET retry_after = now() + interval '1 hour', attempts = 1, last_error = 'test'
            WHERE seq = (SELECT min(seq) FROM ${setup.table})`,
        );
        await insertInterleaved(setup, ['order'], 20);
        const relay = setup.startRelay('--mode', 'poll', '--poll-interval', '200ms');
        await relay.waitForLine(POLLING);
        await waitFor(
          async () =>
            (await readRows(setup)).filter((r) => r.processed).length === 20 &&
            (await readRows(setup)).every((r) => !r.processed || r.aggregate_type === 'order'),
          { timeoutMs: 30_000, what: 'the other aggregates delivered' },
        );
        const hot = await setup.fixture.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM ${setup.table} WHERE aggregate_id = 'hot' AND processed_at IS NOT NULL`,
        );
        assert.equal(hot[0]?.n, 0, 'nothing of the blocked aggregate overtook its head');
      },
      { batchSize: 100 },
    );
  });

  it('keeps polling when transactions default to REPEATABLE READ and a claimed row changes under it', async () => {
    const role = uniqueName('rr');
    await withRelaySetup(async (setup) => {
      const schema = pg.escapeIdentifier(setup.fixture.schema);
      await setup.fixture.query(`CREATE ROLE ${role} LOGIN PASSWORD 'rr-secret'`);
      await setup.fixture.query(`ALTER ROLE ${role} SET default_transaction_isolation = 'repeatable read'`);
      await setup.fixture.query(`GRANT USAGE ON SCHEMA ${schema} TO ${role}`);
      await setup.fixture.query(`GRANT ALL ON ALL TABLES IN SCHEMA ${schema} TO ${role}`);
      const [head, follower] = await setup.fixture.query<{ id: string }>(
        `INSERT INTO ${setup.table} (aggregate_type, aggregate_id, event_type, payload)
         VALUES ('order', 'x', 'created', '{"version": 1}'), ('order', 'x', 'paid', '{"version": 2}')
         RETURNING id::text`,
      );
      // Another session changes the follower and holds its lock: the relay's claim takes the head, then waits.
      const other = new pg.Client({ connectionString: setup.fixture.databaseUrl });
      await other.connect();
      try {
        await other.query('BEGIN');
        await other.query(`UPDATE ${setup.table} SET headers = '{"touched": "yes"}' WHERE id = $1`, [
          follower?.id,
        ]);
        const url = new URL(setup.fixture.databaseUrl);
        url.username = role;
        url.password = 'rr-secret';
        const relay = setup.startRelay(
          '--mode',
          'poll',
          '--poll-interval',
          '100ms',
          '--database-url',
          url.toString(),
        );
        await relay.waitForLine(POLLING);
        await waitFor(
          async () =>
            (
              await setup.fixture.query<{ n: number }>(
                `SELECT count(*)::int AS n FROM pg_stat_activity WHERE usename = $1 AND wait_event_type = 'Lock'`,
                [role],
              )
            )[0]?.n === 1,
          { what: "the relay's claim to wait for the follower's lock" },
        );
        // Under REPEATABLE READ the claim now fails (40001: the row changed after its snapshot).
        await other.query('COMMIT');
        const topic = await setup.reader();
        await topic.waitForIds([head?.id ?? '', follower?.id ?? '']);
        assert.deepEqual(
          topic.messages.map((m) => m.headers['id']),
          [head?.id, follower?.id],
        );
        assert.equal(relay.child.exitCode, null, relay.lines.slice(-3).join('\n'));
      } finally {
        await other.end();
      }
    });
    await withClient((client) => client.query(`DROP ROLE IF EXISTS ${role}`)).catch(() => undefined);
  });
});
