import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import pg from 'pg';

import { startRelayProcess } from '../support/relayProcess.js';
import { runCli } from '../support/runCli.js';
import { startExtraPostgres } from '../support/stackControl.js';
import { withClient } from '../support/testDatabase.js';
import { uniqueName } from '../support/testEnv.js';
import { createWalFixture } from '../support/walFixture.js';
import { waitFor } from '../support/waitFor.js';

describe('WAL mode preflight', () => {
  async function runOnce(args: string[]): Promise<{ code: number | null; stderr: string }> {
    return runCli(['run', ...args], { timeoutMs: 90_000 });
  }

  function assertOnePrecondition(result: { code: number | null; stderr: string }, pattern: RegExp): void {
    assert.equal(result.code, 3, result.stderr);
    assert.match(result.stderr, pattern);
    assert.equal(result.stderr.trim().split('\n').length, 1, result.stderr);
  }

  it('refuses wal_level=replica with the fix (exit 3)', async () => {
    const replica = await startExtraPostgres({ wal_level: 'replica' });
    try {
      const migrated = await runCli(['migrate', '--database-url', replica.url]);
      assert.equal(migrated.code, 0, migrated.stderr);
      const result = await runOnce(['--database-url', replica.url, '--kafka-brokers', '127.0.0.1:1']);
      assertOnePrecondition(
        result,
        /wal_level is replica, WAL mode needs logical: run ALTER SYSTEM SET wal_level = logical/,
      );
    } finally {
      await replica.stop();
    }
  });

  it('refuses a missing publication, a publication without the table, and a missing table (exit 3)', async () => {
    const fixture = await createWalFixture();
    try {
      await fixture.query(`DROP PUBLICATION ${pg.escapeIdentifier(fixture.publication)}`);
      assertOnePrecondition(
        await runOnce(fixture.relayArgs()),
        /publication "pub_\w+" does not exist: run walbox migrate/,
      );

      const other = `${pg.escapeIdentifier(fixture.schema)}.other`;
      await fixture.query(`CREATE TABLE ${other} (id int)`);
      await fixture.query(
        `CREATE PUBLICATION ${pg.escapeIdentifier(fixture.publication)} FOR TABLE ${other}`,
      );
      assertOnePrecondition(
        await runOnce(fixture.relayArgs()),
        /does not include "wal_\w+"\."outbox_events": run ALTER PUBLICATION/,
      );

      assertOnePrecondition(
        await runOnce([...fixture.relayArgs(), '--table', 'no_such_table']),
        /table "wal_\w+"\."no_such_table" does not exist: run walbox migrate/,
      );
    } finally {
      await fixture.cleanUp();
    }
  });

  it('refuses publications that would skip rows silently: a row filter, a column list, partitions under their own names (exit 3)', async () => {
    const fixture = await createWalFixture();
    const publication = pg.escapeIdentifier(fixture.publication);
    const schema = pg.escapeIdentifier(fixture.schema);
    const table = `${schema}.outbox_events`;
    try {
      await fixture.query(
        `ALTER PUBLICATION ${publication} SET TABLE ${table} WHERE (aggregate_type <> 'x')`,
      );
      assertOnePrecondition(await runOnce(fixture.relayArgs()), /filters the rows of .*SET TABLE/);
      await fixture.query(
        `ALTER PUBLICATION ${publication} SET TABLE ${table} (id, aggregate_type, aggregate_id)`,
      );
      assertOnePrecondition(await runOnce(fixture.relayArgs()), /lists only some columns of/);

      await fixture.query(`ALTER PUBLICATION ${publication} SET TABLE ${table}`);
      await fixture.query(`ALTER TABLE ${table} RENAME TO plain_outbox`);
      await fixture.query(
        `CREATE TABLE ${table} (LIKE ${schema}.plain_outbox INCLUDING DEFAULTS) PARTITION BY RANGE (created_at)`,
      );
      await fixture.query(`ALTER PUBLICATION ${publication} SET TABLE ${table}`);
      assertOnePrecondition(
        await runOnce(fixture.relayArgs()),
        /is partitioned .* SET \(publish_via_partition_root = true\)/,
      );
    } finally {
      await fixture.cleanUp();
    }
  });

  it('refuses a two_phase slot and a synchronous_standby_names that names walbox (exit 3)', async () => {
    const fixture = await createWalFixture();
    try {
      await fixture.query("SELECT pg_create_logical_replication_slot($1, 'pgoutput', false, true)", [
        fixture.slot,
      ]);
      assertOnePrecondition(await runOnce(fixture.relayArgs()), /was created with two_phase/);
      await fixture.query('SELECT pg_drop_replication_slot($1)', [fixture.slot]);

      await withClient((c) =>
        c
          .query(`ALTER SYSTEM SET synchronous_standby_names = 'FIRST 1 (standby1, walbox)'`)
          .then(() => c.query('SELECT pg_reload_conf()')),
      );
      try {
        await waitFor(
          async () =>
            (
              await fixture.query<{ s: string }>("SELECT current_setting('synchronous_standby_names') AS s")
            )[0]?.s !== '',
        );
        assertOnePrecondition(
          await runOnce(fixture.relayArgs()),
          /synchronous_standby_names \(FIRST 1 \(standby1, walbox\)\) matches walbox's replication connection/,
        );
      } finally {
        await withClient((c) =>
          c
            .query('ALTER SYSTEM RESET synchronous_standby_names')
            .then(() => c.query('SELECT pg_reload_conf()')),
        );
      }
    } finally {
      await fixture.cleanUp();
    }
  });

  it('refuses a role without REPLICATION, naming the ALTER ROLE that fixes it (exit 3)', async () => {
    const fixture = await createWalFixture();
    const role = uniqueName('norepl');
    try {
      const schema = pg.escapeIdentifier(fixture.schema);
      await fixture.query(`CREATE ROLE ${role} LOGIN PASSWORD 'norepl-secret'`);
      await fixture.query(`GRANT USAGE ON SCHEMA ${schema} TO ${role}`);
      await fixture.query(`GRANT SELECT, UPDATE ON ALL TABLES IN SCHEMA ${schema} TO ${role}`);
      const url = new URL(fixture.databaseUrl);
      url.username = role;
      url.password = 'norepl-secret';
      const args = fixture.relayArgs();
      args[1] = url.toString();
      const result = await runOnce(args);
      assertOnePrecondition(
        result,
        new RegExp(`role ${role} lacks the REPLICATION attribute: run ALTER ROLE "${role}" REPLICATION`),
      );
      assert.doesNotMatch(result.stderr, /norepl-secret/);
    } finally {
      await fixture.cleanUp();
      await fixture.query(`DROP ROLE IF EXISTS ${role}`).catch(() => undefined);
    }
  });

  it('exits 1 within the startup timeout when the broker is unreachable', async () => {
    const fixture = await createWalFixture();
    try {
      const args = fixture.relayArgs('--startup-timeout', '3s');
      args[3] = '127.0.0.1:1';
      const result = await runCli(['run', ...args], { timeoutMs: 60_000 });
      assert.equal(result.code, 1, result.stderr);
      assert.match(result.stderr, /cannot reach Kafka at 127\.0\.0\.1:1 within 3s/);
      assert.equal(result.stderr.trim().split('\n').length, 1, result.stderr);
    } finally {
      await fixture.cleanUp();
    }
  });

  it('--slot-failover: on refuses a server before 17; from 17 on, auto makes a failover slot of a plain one', async () => {
    const fixture = await createWalFixture();
    try {
      const version = Number(
        (await fixture.query<{ v: string }>("SELECT current_setting('server_version_num') AS v"))[0]?.v,
      );
      const failover = async (): Promise<string | undefined> =>
        (
          await fixture.query<{ failover: string | null }>(
            "SELECT to_jsonb(s) ->> 'failover' AS failover FROM pg_replication_slots s WHERE slot_name = $1",
            [fixture.slot],
          )
        )[0]?.failover ?? undefined;
      if (version < 170_000) {
        assertOnePrecondition(
          await runOnce(fixture.relayArgs('--slot-failover', 'on')),
          /--slot-failover on needs PostgreSQL 17 or later \(this server is 1[56]\.\d+\): use --slot-failover auto/,
        );
        return;
      }
      const created = await runCli([
        'slot',
        'create',
        '--database-url',
        fixture.databaseUrl,
        '--slot',
        fixture.slot,
        '--slot-failover',
        'off',
      ]);
      assert.equal(created.code, 0, created.stderr);
      assert.equal(await failover(), 'false');
      const relay = startRelayProcess(fixture.relayArgs());
      try {
        await relay.waitForLine(/replication slot failover setting changed/);
        await relay.waitForLine(/streaming from the replication slot/);
        assert.equal(await failover(), 'true');
      } finally {
        await relay.stop();
      }
    } finally {
      await fixture.cleanUp();
    }
  });
});
