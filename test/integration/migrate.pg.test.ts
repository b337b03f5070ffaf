import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { describe, it } from 'node:test';

import { buildMigrateArgs, buildPrintSqlArgs, trackMigrateTargets } from '../support/migrateTarget.js';
import { runCli } from '../support/runCli.js';
import { withClient } from '../support/testDatabase.js';

const names = trackMigrateTargets('mig');

describe('walbox migrate', () => {
  it('--print-sql prints, without a database, a script that leaves what migrate would (and runs twice)', async () => {
    const n = names();
    const printed = await runCli(buildPrintSqlArgs(n, '--notify-trigger'));
    assert.equal(printed.code, 0, printed.stderr);
    assert.match(printed.stdout, /^-- walbox outbox .*\nBEGIN;/s);
    assert.match(printed.stdout, /COMMIT;\n$/);
    await withClient(async (client) => {
      await client.query(printed.stdout);
      await client.query(printed.stdout);
    });
    // migrate finds every migration applied and the publication there: the script did what it does.
    const result = await runCli(buildMigrateArgs(n));
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /already up to date; publication \S+ unchanged/);
    await withClient(async (client) => {
      const { rows } = await client.query<{ n: string }>(
        `SELECT count(*)::text AS n FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
           JOIN pg_namespace s ON s.oid = c.relnamespace WHERE s.nspname = $1 AND t.tgname = 'walbox_notify'`,
        [n.schema],
      );
      assert.equal(rows[0]?.n, '1');
    });
  });

  it('creates the outbox schema', async () => {
    const n = names();
    const result = await runCli(buildMigrateArgs(n));
    assert.equal(result.code, 0, result.stderr);
    assert.match(
      result.stdout,
      /applied 000001_create_outbox\.sql, 000002_create_dead_letters_view\.sql, 000003_create_walbox_state\.sql, 000004_create_dead_letters_index\.sql, 000005_create_waiting_index\.sql/,
    );
    assert.match(result.stdout, new RegExp(`publication ${n.publication} created`));

    await withClient(async (client) => {
      const { rows: columns } = await client.query<{
        column_name: string;
        data_type: string;
        is_nullable: string;
        column_default: string | null;
        is_identity: string;
        identity_generation: string | null;
      }>(
        `SELECT column_name, data_type, is_nullable, column_default, is_identity, identity_generation
           FROM information_schema.columns WHERE table_schema = $1 AND table_name = 'outbox_events'
          ORDER BY ordinal_position`,
        [n.schema],
      );
      const byName = new Map(columns.map((c) => [c.column_name, c]));
      assert.deepEqual(
        [...byName.keys()].sort(),
        [
          'aggregate_id',
          'aggregate_type',
          'attempts',
          'created_at',
          'dead_lettered_at',
          'event_type',
          'headers',
          'id',
          'last_error',
          'payload',
          'processed_at',
          'retry_after',
          'seq',
        ].sort(),
      );
      assert.equal(byName.get('id')?.data_type, 'uuid');
      assert.equal(byName.get('id')?.column_default, 'gen_random_uuid()');
      assert.equal(byName.get('payload')?.data_type, 'jsonb');
      assert.equal(byName.get('payload')?.is_nullable, 'NO');
      assert.equal(byName.get('headers')?.data_type, 'jsonb');
      assert.equal(byName.get('attempts')?.column_default, '0');
      assert.equal(byName.get('created_at')?.column_default, 'now()');
      assert.equal(byName.get('processed_at')?.is_nullable, 'YES');
      assert.equal(byName.get('seq')?.data_type, 'bigint');
      assert.equal(byName.get('seq')?.is_identity, 'YES');
      assert.equal(byName.get('seq')?.identity_generation, 'ALWAYS');
      for (const c of ['retry_after', 'dead_lettered_at'])
        assert.equal(byName.get(c)?.data_type, 'timestamp with time zone');
      assert.equal(byName.get('last_error')?.data_type, 'text');

      const { rows: primaryKey } = await client.query<{ columns: string }>(
        `SELECT string_agg(a.attname, ',') AS columns
           FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY (i.indkey)
          WHERE i.indrelid = $1::regclass AND i.indisprimary`,
        [`"${n.schema}".outbox_events`],
      );
      assert.equal(primaryKey[0]?.columns, 'id');

      const { rows: indexes } = await client.query<{ indexdef: string }>(
        `SELECT indexdef FROM pg_indexes WHERE schemaname = $1 AND indexname = 'outbox_events_pending_idx'`,
        [n.schema],
      );
      assert.match(
        indexes[0]?.indexdef ?? '',
        /\(seq\) WHERE \(\(processed_at IS NULL\) AND \(dead_lettered_at IS NULL\)\)/,
      );

      const { rows: deadIndex } = await client.query<{ indexdef: string }>(
        `SELECT indexdef FROM pg_indexes WHERE schemaname = $1 AND indexname = 'outbox_events_dead_idx'`,
        [n.schema],
      );
      assert.match(
        deadIndex[0]?.indexdef ?? '',
        /\(seq\) WHERE \(\(dead_lettered_at IS NOT NULL\) AND \(processed_at IS NULL\)\)/,
      );

      const { rows: view } = await client.query<{ definition: string }>(
        `SELECT pg_get_viewdef(format('%I.%I', $1::text, 'outbox_dead_letters')::regclass) AS definition`,
        [n.schema],
      );
      assert.match(view[0]?.definition ?? '', /dead_lettered_at IS NOT NULL\) AND \(.*processed_at IS NULL/);

      const { rows: publication } = await client.query<{
        pubinsert: boolean;
        pubupdate: boolean;
        pubdelete: boolean;
        pubtruncate: boolean;
        tables: string[];
      }>(
        `SELECT p.pubinsert, p.pubupdate, p.pubdelete, p.pubtruncate,
                array(SELECT schemaname || '.' || tablename FROM pg_publication_tables t WHERE t.pubname = p.pubname) AS tables
           FROM pg_publication p WHERE p.pubname = $1`,
        [n.publication],
      );
      assert.deepEqual(publication[0], {
        pubinsert: true,
        pubupdate: false,
        pubdelete: false,
        pubtruncate: false,
        tables: [`${n.schema}.outbox_events`],
      });

      // The view shows exactly the dead-lettered, unpublished rows.
      await client.query(
        `INSERT INTO "${n.schema}".outbox_events (aggregate_type, aggregate_id, event_type, payload, dead_lettered_at, processed_at)
         VALUES ('t', '1', 'e', '{}', now(), NULL), ('t', '2', 'e', '{}', NULL, NULL), ('t', '3', 'e', '{}', now(), now())`,
      );
      const { rows: dead } = await client.query<{ aggregate_id: string }>(
        `SELECT aggregate_id FROM "${n.schema}".outbox_dead_letters`,
      );
      assert.deepEqual(
        dead.map((r) => r.aggregate_id),
        ['1'],
      );
    });
  });

  it('is idempotent', async () => {
    const n = names();
    assert.equal((await runCli(buildMigrateArgs(n))).code, 0);
    const again = await runCli(buildMigrateArgs(n));
    assert.equal(again.code, 0, again.stderr);
    assert.match(again.stdout, /already up to date; publication \S+ unchanged/);
    const count = await withClient(async (client) => {
      const { rows } = await client.query<{ n: string }>(
        `SELECT count(*) AS n FROM "${n.schema}".walbox_migrations`,
      );
      return Number(rows[0]?.n);
    });
    assert.equal(count, 5);
  });

  it('is safe to run concurrently: every run succeeds, each migration is applied once', async () => {
    const n = names();
    const results = await Promise.all([
      runCli(buildMigrateArgs(n)),
      runCli(buildMigrateArgs(n)),
      runCli(buildMigrateArgs(n)),
    ]);
    for (const r of results) assert.equal(r.code, 0, r.stderr);
    assert.equal(results.filter((r) => r.stdout.includes('applied 000001')).length, 1);
    await withClient(async (client) => {
      const { rows } = await client.query<{ id: number }>(
        `SELECT id FROM "${n.schema}".walbox_migrations ORDER BY id`,
      );
      assert.deepEqual(
        rows.map((r) => r.id),
        [1, 2, 3, 4, 5],
      );
    });
  });

  it('adopts an existing table of the classic outbox shape, keeping its rows', async () => {
    const n = names();
    await withClient(async (client) => {
      await client.query(`CREATE SCHEMA "${n.schema}"`);
      await client.query(`CREATE TABLE "${n.schema}".outbox_events (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(), aggregate_type varchar(100) NOT NULL,
        aggregate_id varchar(100) NOT NULL, event_type varchar(100) NOT NULL, payload jsonb NOT NULL,
        attempts int NOT NULL DEFAULT 0, created_at timestamptz NOT NULL DEFAULT now(), processed_at timestamptz)`);
      await client.query(`INSERT INTO "${n.schema}".outbox_events (aggregate_type, aggregate_id, event_type, payload)
                          VALUES ('order', 'a', 'created', '{"n": 1}'), ('order', 'b', 'created', '{"n": 2}')`);
    });
    const result = await runCli(buildMigrateArgs(n));
    assert.equal(result.code, 0, result.stderr);
    await withClient(async (client) => {
      const { rows } = await client.query<{ aggregate_id: string; seq: string }>(
        `SELECT aggregate_id, seq::text FROM "${n.schema}".outbox_events ORDER BY seq`,
      );
      assert.deepEqual(
        rows.map((r) => r.aggregate_id),
        ['a', 'b'],
      );
      assert.ok(rows.every((r) => /^\d+$/.test(r.seq)));
    });
  });

  it('creates processed_events with --consumer', async () => {
    const n = names();
    const result = await runCli(buildMigrateArgs(n, '--consumer'));
    assert.equal(result.code, 0, result.stderr);
    await withClient(async (client) => {
      const { rows } = await client.query<{ column_name: string; data_type: string }>(
        `SELECT column_name, data_type FROM information_schema.columns
          WHERE table_schema = $1 AND table_name = 'processed_events' ORDER BY ordinal_position`,
        [n.schema],
      );
      assert.deepEqual(rows, [
        { column_name: 'consumer', data_type: 'text' },
        { column_name: 'event_id', data_type: 'uuid' },
        { column_name: 'processed_at', data_type: 'timestamp with time zone' },
      ]);
      const { rows: pk } = await client.query<{ def: string }>(
        `SELECT pg_get_constraintdef(oid) AS def FROM pg_constraint WHERE conrelid = $1::regclass AND contype = 'p'`,
        [`"${n.schema}".processed_events`],
      );
      assert.equal(pk[0]?.def, 'PRIMARY KEY (consumer, event_id)');
    });
  });

  it('refuses an existing publication that lacks the table, with the fix (exit 3)', async () => {
    const n = names();
    await withClient(async (client) => {
      await client.query(`CREATE SCHEMA "${n.schema}"`);
      await client.query(`CREATE TABLE "${n.schema}".other (id int)`);
      await client.query(`CREATE PUBLICATION "${n.publication}" FOR TABLE "${n.schema}".other`);
    });
    const result = await runCli(buildMigrateArgs(n));
    assert.equal(result.code, 3, result.stderr);
    assert.match(result.stderr, /does not include .*ALTER PUBLICATION/);
    assert.equal(result.stderr.trim().split('\n').length, 1);
  });

  it('rejects an injection attempt in --table with a clear error and executes nothing', async () => {
    const n = names();
    await withClient(async (client) => {
      await client.query(`CREATE SCHEMA "${n.schema}"`);
      await client.query(`CREATE TABLE "${n.schema}".x (id int)`);
    });
    const result = await runCli(buildMigrateArgs(n, '--table', 'outbox"; DROP TABLE x; --'));
    assert.equal(result.code, 2);
    assert.match(
      result.stderr,
      /^walbox migrate: invalid --table "outbox\\"; DROP TABLE x; --": must start with a letter/,
    );
    assert.equal(result.stderr.trim().split('\n').length, 1);
    await withClient(async (client) => {
      const { rows } = await client.query<{ tables: string[] }>(
        `SELECT array(SELECT tablename FROM pg_tables WHERE schemaname = $1 ORDER BY 1)::text[] AS tables`,
        [n.schema],
      );
      assert.deepEqual(rows[0]?.tables, ['x']);
    });
    // Validation happens before any connection: pointed at a listener, the CLI never even connects.
    const connections = await countConnections(async (url) => {
      const refused = await runCli([
        'migrate',
        '--database-url',
        url,
        '--table',
        'outbox"; DROP TABLE x; --',
      ]);
      assert.equal(refused.code, 2);
    });
    assert.equal(connections, 0);
  });
});

/** How many TCP connections reach a loopback listener while `body` runs. */
async function countConnections(body: (url: string) => Promise<void>): Promise<number> {
  let connections = 0;
  const server = createServer((socket) => {
    connections++;
    socket.destroy();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  try {
    await body(`postgres://postgres@127.0.0.1:${port}/walbox`);
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
  return connections;
}
