import assert from 'node:assert/strict';
import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';

import pg from 'pg';

import { assertAllDelivered } from '../support/deliveryReport.js';
import {
  buildMigrateArgs,
  buildPrintSqlArgs,
  trackMigrateTargets,
  type MigrateTarget,
} from '../support/migrateTarget.js';
import type { WrittenEvent } from '../support/outboxWriter.js';
import { countProcessed, withRelaySetup, type RelaySetup } from '../support/relaySetup.js';
import { runCli } from '../support/runCli.js';
import { withClient } from '../support/testDatabase.js';
import { requireDatabaseUrl, requireKafkaBrokers, uniqueName } from '../support/testEnv.js';
import { waitFor } from '../support/waitFor.js';
import { buildSlotCommandArgs, createWalFixture, type WalFixture } from '../support/walFixture.js';

const STREAMING = /streaming from the replication slot/;
const POLLING = /polling the outbox/;
const DAY_MS = 86_400_000;
const TABLE = 'outbox_events';

/** How the partitioned table gets its seq column: as the docs recommend per version, or left to migrate. */
type SeqColumn = 'sequence' | 'identity' | 'none';

/** A partition of [from, to) days from now, or the default partition. */
interface PartitionSpec {
  readonly name: string;
  readonly from?: number;
  readonly to?: number;
}

async function readServerVersion(url: string): Promise<number> {
  return withClient(async (client) => {
    const { rows } = await client.query<{ v: string }>("SELECT current_setting('server_version_num') AS v");
    return Number(rows[0]?.v);
  }, url);
}

/** The seq column the docs recommend on this server: a sequence default before 17, identity from 17 on. */
async function recommendedSeq(url: string): Promise<SeqColumn> {
  return (await readServerVersion(url)) >= 170_000 ? 'identity' : 'sequence';
}

function dayLiteral(days: number): string {
  return pg.escapeLiteral(new Date(Date.now() + days * DAY_MS).toISOString());
}

/**
 * The user's DDL of docs/operations.md ("Partitioned outbox tables"): the article's columns, partitioned by RANGE
 * on created_at, with the primary key including it; walbox's migrations add the rest.
 */
async function createPartitionedOutbox(
  client: pg.ClientBase,
  schema: string,
  seq: SeqColumn,
  partitions: readonly PartitionSpec[],
): Promise<void> {
  const s = pg.escapeIdentifier(schema);
  const t = `${s}.${TABLE}`;
  const sequence = `${s}.${pg.escapeIdentifier(`${TABLE}_seq_seq`)}`;
  await client.query(`CREATE SCHEMA ${s}`);
  if (seq === 'sequence') await client.query(`CREATE SEQUENCE ${sequence}`);
  const seqColumn = {
    sequence: `seq bigint NOT NULL DEFAULT nextval(${pg.escapeLiteral(sequence)}),`,
    identity: 'seq bigint GENERATED ALWAYS AS IDENTITY,',
    none: '',
  }[seq];
  await client.query(`
    CREATE TABLE ${t} (
      id             uuid         NOT NULL DEFAULT gen_random_uuid(),
      aggregate_type varchar(100) NOT NULL,
      aggregate_id   varchar(100) NOT NULL,
      event_type     varchar(100) NOT NULL,
      payload        jsonb        NOT NULL,
      attempts       int          NOT NULL DEFAULT 0,
      created_at     timestamptz  NOT NULL DEFAULT now(),
      processed_at   timestamptz,
      ${seqColumn}
      PRIMARY KEY (id, created_at)
    ) PARTITION BY RANGE (created_at)`);
  if (seq === 'sequence') await client.query(`ALTER SEQUENCE ${sequence} OWNED BY ${t}.seq`);
  for (const p of partitions) {
    const bounds =
      p.from === undefined || p.to === undefined
        ? 'DEFAULT'
        : `FOR VALUES FROM (${dayLiteral(p.from)}) TO (${dayLiteral(p.to)})`;
    await client.query(`CREATE TABLE ${s}.${pg.escapeIdentifier(p.name)} PARTITION OF ${t} ${bounds}`);
  }
}

/** Where the delivery tests write: an old, a recent and the current partition. */
const DELIVERY_PARTITIONS: readonly PartitionSpec[] = [
  { name: 'outbox_events_old', from: -60, to: -30 },
  { name: 'outbox_events_recent', from: -30, to: -1 },
  { name: 'outbox_events_now', from: -1, to: 2 },
];

/** The three ways a row reaches a partition: routed by now(), routed by an older created_at, inserted directly. */
function insertStatement(schema: string, route: number): string {
  const s = pg.escapeIdentifier(schema);
  const columns = 'aggregate_type, aggregate_id, event_type, payload';
  switch (route % 3) {
    case 0:
      return `INSERT INTO ${s}.${TABLE} (${columns}) VALUES ('order', $1, 'test.event', $2) RETURNING id::text`;
    case 1:
      return `INSERT INTO ${s}.${TABLE} (${columns}, created_at)
              VALUES ('order', $1, 'test.event', $2, now() - interval '10 days') RETURNING id::text`;
    default:
      return `INSERT INTO ${s}.outbox_events_recent (${columns}, created_at)
              VALUES ('order', $1, 'test.event', $2, now() - interval '5 days') RETURNING id::text`;
  }
}

/**
 * Writes `perAggregate` events to each of `aggregates` aggregates, one transaction each, in version order per
 * aggregate; consecutive events of an aggregate go to different partitions (and one in three straight into a
 * partition). `workers` write concurrently, each on its own aggregates.
 */
async function writeAcrossPartitions(
  url: string,
  schema: string,
  options: { aggregates: number; perAggregate: number; workers: number; prefix: string },
): Promise<WrittenEvent[]> {
  const written: WrittenEvent[] = [];
  const worker = async (w: number): Promise<void> => {
    await withClient(async (client) => {
      for (let a = w; a < options.aggregates; a += options.workers) {
        const aggregateId = `${options.prefix}-${String(a)}`;
        for (let version = 1; version <= options.perAggregate; version++) {
          const payload = JSON.stringify({ aggregate: aggregateId, version });
          const { rows } = await client.query<{ id: string }>(insertStatement(schema, version + a), [
            aggregateId,
            payload,
          ]);
          written.push({ id: rows[0]?.id ?? '', aggregateId, version });
        }
      }
    }, url);
  };
  await Promise.all(Array.from({ length: options.workers }, (_, w) => worker(w)));
  return written;
}

/** Rows per partition of the fixture's outbox. */
async function countByPartition(fixture: WalFixture): Promise<Map<string, number>> {
  const rows = await fixture.query<{ partition: string; n: string }>(
    `SELECT tableoid::regclass::text AS partition, count(*)::text AS n
       FROM ${pg.escapeIdentifier(fixture.schema)}.${TABLE} GROUP BY 1`,
  );
  return new Map(rows.map((r) => [r.partition.split('.').at(-1) ?? '', Number(r.n)]));
}

/** Writes before and while a relay runs, then checks that every event arrived once in order per aggregate. */
async function deliverAcrossPartitions(
  setup: RelaySetup,
  ready: RegExp,
  ...relayFlags: string[]
): Promise<void> {
  const { fixture } = setup;
  // Pending before the first start: WAL mode delivers these from the table (the slot's snapshot), poll mode polls.
  const before = await writeAcrossPartitions(fixture.databaseUrl, fixture.schema, {
    aggregates: 10,
    perAggregate: 6,
    workers: 2,
    prefix: 'early',
  });
  await fixture.query(
    `INSERT INTO ${pg.escapeIdentifier(fixture.schema)}.outbox_events_old (aggregate_type, aggregate_id, event_type, payload, created_at)
     VALUES ('order', 'old-1', 'test.event', '{"aggregate": "old-1", "version": 1}', now() - interval '40 days')`,
  );
  const [old] = await fixture.query<{ id: string }>(
    `SELECT id::text FROM ${pg.escapeIdentifier(fixture.schema)}.outbox_events_old`,
  );
  const relay = setup.startRelay(...relayFlags);
  await relay.waitForLine(ready);
  const during = await writeAcrossPartitions(fixture.databaseUrl, fixture.schema, {
    aggregates: 40,
    perAggregate: 12,
    workers: 4,
    prefix: 'agg',
  });
  const committed = [...before, { id: old?.id ?? '', aggregateId: 'old-1', version: 1 }, ...during];
  const partitions = await countByPartition(fixture);
  assert.deepEqual(
    [...partitions.keys()].sort(),
    ['outbox_events_now', 'outbox_events_old', 'outbox_events_recent'],
    'rows in every partition',
  );
  // No duplicates without a fault.
  await assertAllDelivered(setup, committed, 0);
  const topic = await setup.reader();
  await waitFor(async () => (await countProcessed(fixture)) === committed.length, {
    what: 'every row of every partition marked processed',
  });
  for (const message of topic.messages) assert.equal(message.headers['aggregate_type'], 'order');
}

describe('partitioned outbox: delivery', () => {
  it('WAL mode delivers every event of every partition (catch-up and stream, direct partition inserts), in order per aggregate; status and doctor pass', async () => {
    const url = requireDatabaseUrl();
    const seq = await recommendedSeq(url);
    await withRelaySetup(
      async (setup) => {
        const published = await setup.fixture.query<{ pubviaroot: boolean }>(
          'SELECT pubviaroot FROM pg_publication WHERE pubname = $1',
          [setup.fixture.publication],
        );
        assert.deepEqual(published, [{ pubviaroot: true }], 'migrate publishes via the partition root');
        await deliverAcrossPartitions(setup, STREAMING);
        const status = await runCli(['status', ...buildSlotCommandArgs(setup.fixture)]);
        assert.equal(status.code, 0, status.stdout + status.stderr);
        const doctor = await runCli([
          'doctor',
          ...buildSlotCommandArgs(setup.fixture, '--kafka-brokers', requireKafkaBrokers().join(',')),
        ]);
        assert.equal(doctor.code, 0, doctor.stdout + doctor.stderr);
        assert.match(doctor.stdout, /PASS.*publication/i);
      },
      { prepare: (client, schema) => createPartitionedOutbox(client, schema, seq, DELIVERY_PARTITIONS) },
    );
  });

  it('poll mode delivers every event of every partition with two relays, in order per aggregate', async () => {
    const url = requireDatabaseUrl();
    const seq = await recommendedSeq(url);
    await withRelaySetup(
      async (setup) => {
        // Two relays share the partitioned table (FOR UPDATE OF o SKIP LOCKED).
        setup.startRelay('--mode', 'poll', '--poll-interval', '100ms');
        await deliverAcrossPartitions(setup, POLLING, '--mode', 'poll', '--poll-interval', '100ms');
        const status = await runCli(['status', ...buildSlotCommandArgs(setup.fixture, '--mode', 'poll')]);
        assert.equal(status.code, 0, status.stdout + status.stderr);
      },
      { prepare: (client, schema) => createPartitionedOutbox(client, schema, seq, DELIVERY_PARTITIONS) },
    );
  });
});

/** psql of this machine (the stack's client tools): the way teams apply --print-sql output. */
function findPsql(): string {
  const base = '/usr/lib/postgresql';
  const versions = existsSync(base) ? readdirSync(base).sort((a, b) => Number(b) - Number(a)) : [];
  for (const v of versions) {
    const psql = join(base, v, 'bin', 'psql');
    if (existsSync(psql)) return psql;
  }
  throw new Error('psql not found in /usr/lib/postgresql/*/bin: install postgresql-client');
}

function runPsql(script: string): SpawnSyncReturns<string> {
  return spawnSync(
    findPsql(),
    ['--no-psqlrc', '-q', '-v', 'ON_ERROR_STOP=1', '-d', requireDatabaseUrl(), '-f', '-'],
    { input: script, encoding: 'utf8' },
  );
}

function applyWithPsql(script: string): void {
  const result = runPsql(script);
  assert.equal(result.status, 0, `psql failed: ${result.stderr}`);
}

async function readPubViaRoot(publication: string): Promise<boolean | undefined> {
  return withClient(async (client) => {
    const { rows } = await client.query<{ pubviaroot: boolean }>(
      'SELECT pubviaroot FROM pg_publication WHERE pubname = $1',
      [publication],
    );
    return rows[0]?.pubviaroot;
  });
}

/** The partial indexes walbox's migrations create exist on the parent and on every partition. */
async function countPendingIndexes(schema: string): Promise<number> {
  return withClient(async (client) => {
    const { rows } = await client.query<{ n: string }>(
      `SELECT count(*)::text AS n FROM pg_indexes WHERE schemaname = $1
          AND indexdef LIKE '%USING btree (seq) WHERE ((processed_at IS NULL) AND (dead_lettered_at IS NULL))'`,
      [schema],
    );
    return Number(rows[0]?.n);
  });
}

describe('partitioned outbox: migrate', () => {
  const names = trackMigrateTargets('part');

  const partitions: readonly PartitionSpec[] = [
    { name: 'outbox_events_a', from: -30, to: -1 },
    { name: 'outbox_events_b', from: -1, to: 30 },
  ];

  /** A fresh target whose outbox is the documented partitioned DDL, with the seq column recommended here. */
  async function createPartitionedTarget(): Promise<MigrateTarget> {
    const n = names();
    const seq = await recommendedSeq(requireDatabaseUrl());
    await withClient((client) => createPartitionedOutbox(client, n.schema, seq, partitions));
    return n;
  }

  it('applies every migration to the documented DDL, twice (idempotent), and publishes via the partition root', async () => {
    const n = await createPartitionedTarget();
    const first = await runCli(buildMigrateArgs(n));
    assert.equal(first.code, 0, first.stderr);
    assert.match(first.stdout, /applied 000001.*000005.*; publication \S+ created/);
    const second = await runCli(buildMigrateArgs(n));
    assert.equal(second.code, 0, second.stderr);
    assert.match(second.stdout, /already up to date; publication \S+ unchanged/);
    assert.equal(await readPubViaRoot(n.publication), true);
    // The parent's index and one per partition, a partition created later included.
    await withClient((client) =>
      client.query(
        `CREATE TABLE ${pg.escapeIdentifier(n.schema)}.outbox_events_c PARTITION OF ${pg.escapeIdentifier(n.schema)}.${TABLE}
           FOR VALUES FROM (${dayLiteral(30)}) TO (${dayLiteral(60)})`,
      ),
    );
    assert.equal(await countPendingIndexes(n.schema), 4);
    // A row inserted straight into a partition gets its seq and every default, as one routed by the parent.
    const rows = await withClient(async (client) => {
      const s = pg.escapeIdentifier(n.schema);
      await client.query(
        `INSERT INTO ${s}.outbox_events_a (aggregate_type, aggregate_id, event_type, payload, created_at)
         VALUES ('order', 'a', 'e', '{}', now() - interval '2 days')`,
      );
      await client.query(
        `INSERT INTO ${s}.${TABLE} (aggregate_type, aggregate_id, event_type, payload) VALUES ('order', 'b', 'e', '{}')`,
      );
      return (
        await client.query<{ seq: string; attempts: number; pending: boolean }>(
          `SELECT seq::text, attempts, processed_at IS NULL AND dead_lettered_at IS NULL AS pending
             FROM ${s}.${TABLE} ORDER BY seq`,
        )
      ).rows;
    });
    assert.deepEqual(rows, [
      { seq: '1', attempts: 0, pending: true },
      { seq: '2', attempts: 0, pending: true },
    ]);
  });

  it('--print-sql, applied with psql twice, leaves what migrate would on a partitioned table', async () => {
    const n = await createPartitionedTarget();
    const printed = await runCli(buildPrintSqlArgs(n));
    assert.equal(printed.code, 0, printed.stderr);
    applyWithPsql(printed.stdout);
    applyWithPsql(printed.stdout);
    assert.equal(await readPubViaRoot(n.publication), true);
    const result = await runCli(buildMigrateArgs(n));
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /already up to date; publication \S+ unchanged/);
  });

  it('a partitioned table without seq: migrate adds it from PostgreSQL 17 on; before, it refuses with the statements that fix it (exit 3)', async () => {
    const n = names();
    const s = pg.escapeIdentifier(n.schema);
    await withClient(async (client) => {
      await createPartitionedOutbox(client, n.schema, 'none', partitions);
      await client.query(
        `INSERT INTO ${s}.${TABLE} (aggregate_type, aggregate_id, event_type, payload, created_at)
         VALUES ('order', 'a', 'e', '{}', now() - interval '2 days'), ('order', 'b', 'e', '{}', now())`,
      );
    });
    if ((await readServerVersion(requireDatabaseUrl())) < 170_000) {
      const refused = await runCli(buildMigrateArgs(n));
      assert.equal(refused.code, 3, refused.stderr);
      assert.equal(refused.stderr.trim().split('\n').length, 1);
      const fix = /migrate again: (.*) \(docs\//.exec(refused.stderr)?.[1];
      assert.ok(fix !== undefined, refused.stderr);
      const script = await runCli(buildPrintSqlArgs(n));
      const psql = runPsql(script.stdout);
      assert.notEqual(psql.status, 0, 'the script stops before any migration too');
      assert.match(psql.stderr, /is partitioned and has no seq column/);
      await withClient((client) => client.query(fix));
    }
    const result = await runCli(buildMigrateArgs(n));
    assert.equal(result.code, 0, result.stderr);
    assert.equal(await readPubViaRoot(n.publication), true);
    // Rows already there got a seq; a row inserted straight into a partition gets the next one.
    const seqs = await withClient(async (client) => {
      await client.query(
        `INSERT INTO ${s}.outbox_events_b (aggregate_type, aggregate_id, event_type, payload) VALUES ('order', 'c', 'e', '{}')`,
      );
      return (
        await client.query<{ a: string; seq: string }>(
          `SELECT aggregate_id AS a, seq::text FROM ${s}.${TABLE} ORDER BY seq`,
        )
      ).rows;
    });
    assert.equal(seqs.length, 3);
    assert.equal(seqs.at(-1)?.a, 'c');
    assert.equal(new Set(seqs.map((r) => r.seq)).size, 3);
  });

  it("switches walbox's own publication to publish via the partition root; reports a shared one or a live slot with the fix", async () => {
    const n = await createPartitionedTarget();
    const s = pg.escapeIdentifier(n.schema);
    const publication = pg.escapeIdentifier(n.publication);
    // Migrated once with another publication: walbox_state exists for the slot below.
    const first = names(n.schema);
    assert.equal((await runCli(buildMigrateArgs(first))).code, 0);
    await withClient(async (client) => {
      await client.query(`CREATE TABLE ${s}.other (id int PRIMARY KEY)`);
      // Shared with another table: reported, not changed.
      await client.query(
        `CREATE PUBLICATION ${publication} FOR TABLE ${s}.${TABLE}, ${s}.other WITH (publish = 'insert')`,
      );
    });
    const shared = await runCli(buildMigrateArgs(n));
    assert.equal(shared.code, 3, shared.stderr);
    assert.match(shared.stderr, /SET \(publish_via_partition_root = true\)/);
    assert.equal(await readPubViaRoot(n.publication), false);

    // walbox's own kind, with a slot walbox recorded: the slot's inserts would be skipped, so drop it first.
    const slot = uniqueName('slot');
    await withClient(async (client) => {
      await client.query(`ALTER PUBLICATION ${publication} SET TABLE ${s}.${TABLE}`);
      await client.query("SELECT pg_create_logical_replication_slot($1, 'pgoutput')", [slot]);
      await client.query(
        `INSERT INTO ${s}.walbox_state (slot, outbox_table, system_identifier) VALUES ($1, $2, 'x')`,
        [slot, TABLE],
      );
    });
    try {
      const live = await runCli(buildMigrateArgs(n));
      assert.equal(live.code, 3, live.stderr);
      assert.match(live.stderr, new RegExp(`replication slot ${slot} .*walbox slot drop`));
      const script = await runCli(buildPrintSqlArgs(n));
      const psql = runPsql(script.stdout);
      assert.notEqual(psql.status, 0, 'the script refuses too');
      assert.match(psql.stderr, /walbox slot drop/);
    } finally {
      await withClient((client) => client.query('SELECT pg_drop_replication_slot($1)', [slot]));
    }
    const updated = await runCli(buildMigrateArgs(n));
    assert.equal(updated.code, 0, updated.stderr);
    assert.match(updated.stdout, /publication \S+ updated/);
    assert.equal(await readPubViaRoot(n.publication), true);
    const publishes = await withClient(
      async (client) =>
        (
          await client.query<{ pubinsert: boolean; pubupdate: boolean }>(
            'SELECT pubinsert, pubupdate FROM pg_publication WHERE pubname = $1',
            [n.publication],
          )
        ).rows[0],
    );
    assert.deepEqual(publishes, { pubinsert: true, pubupdate: false }, 'the other settings stay');
    const again = await runCli(buildMigrateArgs(n));
    assert.match(again.stdout, /publication \S+ unchanged/);

    // The script does the same switch.
    await withClient((client) =>
      client.query(`ALTER PUBLICATION ${publication} SET (publish_via_partition_root = false)`),
    );
    applyWithPsql((await runCli(buildPrintSqlArgs(n))).stdout);
    assert.equal(await readPubViaRoot(n.publication), true);
  });
});

/** Flags of cleanup for a fixture. */
function cleanupArgs(fixture: WalFixture, ...extra: string[]): string[] {
  return ['cleanup', '--database-url', fixture.databaseUrl, '--schema', fixture.schema, ...extra];
}

async function listPartitions(fixture: WalFixture): Promise<string[]> {
  const rows = await fixture.query<{ name: string }>(
    `SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
      WHERE i.inhparent = to_regclass($1) ORDER BY 1`,
    [`${pg.escapeIdentifier(fixture.schema)}.${TABLE}`],
  );
  return rows.map((r) => r.name);
}

/** Inserts rows straight into a partition: `count` rows with the given created_at and bookkeeping columns. */
async function fill(
  fixture: WalFixture,
  partition: string,
  count: number,
  columns: { created: string; processed?: string; deadLettered?: string; label?: string },
): Promise<void> {
  await fixture.query(
    `INSERT INTO ${pg.escapeIdentifier(fixture.schema)}.${pg.escapeIdentifier(partition)}
       (aggregate_type, aggregate_id, event_type, payload, created_at, processed_at, dead_lettered_at, last_error)
     SELECT 'order', $2 || g, 'e', '{}', now() - $3::interval, now() - $4::interval, now() - $5::interval,
            CASE WHEN $5::interval IS NOT NULL THEN 'x' END
       FROM generate_series(1, $1) g`,
    [
      count,
      columns.label ?? partition,
      columns.created,
      columns.processed ?? null,
      columns.deadLettered ?? null,
    ],
  );
}

describe('partitioned outbox: cleanup', () => {
  const cleanupPartitions: readonly PartitionSpec[] = [
    { name: 'p_a', from: -60, to: -50 },
    { name: 'p_b', from: -50, to: -40 },
    { name: 'p_c', from: -40, to: -30 },
    { name: 'p_d', from: -30, to: -20 },
    { name: 'p_e', from: -20, to: -10 },
    { name: 'p_f', from: -10, to: -5 },
    { name: 'p_now', from: -5, to: 5 },
    { name: 'p_default' },
  ];

  it('deleting rows never touches a pending row of another partition at the same ctid', async () => {
    const seq = await recommendedSeq(requireDatabaseUrl());
    const fixture = await createWalFixture({
      prepare: (client, schema) => createPartitionedOutbox(client, schema, seq, cleanupPartitions),
    });
    try {
      await fill(fixture, 'p_a', 1, { created: '55 days', processed: '45 days', label: 'old-processed' });
      await fill(fixture, 'p_b', 1, { created: '45 days', label: 'old-pending' });
      await fill(fixture, 'p_c', 1, { created: '35 days', deadLettered: '30 days', label: 'old-dead' });
      const placed = await fixture.query<{ ctid: string }>(
        `SELECT DISTINCT ctid::text FROM ${pg.escapeIdentifier(fixture.schema)}.${TABLE}`,
      );
      assert.deepEqual(placed, [{ ctid: '(0,1)' }], 'the three rows share their ctid, in three partitions');
      const result = await runCli(cleanupArgs(fixture, '--older-than', '7d', '--batch', '1'));
      assert.equal(result.code, 0, result.stderr);
      assert.match(result.stdout, /deleted 1 rows/);
      const left = await fixture.query<{ a: string }>(
        `SELECT aggregate_id AS a FROM ${pg.escapeIdentifier(fixture.schema)}.${TABLE} ORDER BY 1`,
      );
      assert.deepEqual(
        left.map((r) => r.a),
        ['old-dead1', 'old-pending1'],
      );
      const dead = await runCli(cleanupArgs(fixture, '--older-than', '7d', '--include-dead-letters'));
      assert.equal(dead.code, 0, dead.stderr);
      assert.match(dead.stdout, /deleted 1 rows/);
    } finally {
      await fixture.cleanUp();
    }
  });

  it('--drop-partitions drops only partitions whose range ended and whose rows are all old; never a pending row', async () => {
    const seq = await recommendedSeq(requireDatabaseUrl());
    const fixture = await createWalFixture({
      prepare: (client, schema) => createPartitionedOutbox(client, schema, seq, cleanupPartitions),
    });
    try {
      await fill(fixture, 'p_a', 50, { created: '55 days', processed: '45 days' });
      await fill(fixture, 'p_b', 20, { created: '45 days', processed: '40 days' });
      await fill(fixture, 'p_b', 1, { created: '44 days', label: 'pending' });
      await fill(fixture, 'p_c', 20, { created: '35 days', processed: '30 days' });
      await fill(fixture, 'p_c', 1, { created: '34 days', deadLettered: '30 days', label: 'dead' });
      // Created long ago but processed yesterday (a relay that was down): not old enough yet.
      await fill(fixture, 'p_d', 5, { created: '25 days', processed: '1 day' });
      // p_e stays empty: its range ended, nothing can go there any more.
      await fill(fixture, 'p_f', 5, { created: '9 days', processed: '8 days' });
      await fill(fixture, 'p_now', 5, { created: '1 day', processed: '20 days' });
      await fill(fixture, 'p_default', 5, { created: '100 days', processed: '90 days' });
      const pendingRows = async (): Promise<string[]> =>
        (
          await fixture.query<{ a: string }>(
            `SELECT aggregate_id AS a FROM ${pg.escapeIdentifier(fixture.schema)}.${TABLE}
              WHERE processed_at IS NULL AND dead_lettered_at IS NULL`,
          )
        ).map((r) => r.a);
      assert.deepEqual(await pendingRows(), ['pending1']);

      // A writer's open transaction holds the outbox: the drop waits no longer than --lock-timeout.
      await withClient(async (writer) => {
        await writer.query('BEGIN');
        await writer.query(
          `INSERT INTO ${pg.escapeIdentifier(fixture.schema)}.${TABLE} (aggregate_type, aggregate_id, event_type, payload)
           VALUES ('order', 'writer', 'e', '{}')`,
        );
        const waited = await runCli(
          cleanupArgs(fixture, '--older-than', '7d', '--drop-partitions', '--lock-timeout', '300ms'),
        );
        await writer.query('ROLLBACK');
        assert.equal(waited.code, 0, waited.stderr);
        assert.match(
          waited.stdout,
          /kept partition \S*p_a \(50 rows\): its lock was not granted within 300 ms/,
        );
        assert.match(waited.stdout, /dropped 0 partitions/);
      }, fixture.databaseUrl);

      const first = await runCli(cleanupArgs(fixture, '--older-than', '7d', '--drop-partitions'));
      assert.equal(first.code, 0, first.stderr);
      assert.match(first.stdout, /dropped partition \S*p_a \(50 rows\)/);
      assert.match(first.stdout, /dropped partition \S*p_e \(0 rows\)/);
      assert.match(first.stdout, /kept partition \S*p_b \(21 rows\): holds 1 pending/);
      assert.match(first.stdout, /kept partition \S*p_c \(21 rows\): holds 1 dead-lettered/);
      assert.match(first.stdout, /kept partition \S*p_d \(5 rows\): holds 5 processed within --older-than/);
      assert.match(first.stdout, /dropped 2 partitions \(50 rows\)/);
      assert.deepEqual(await listPartitions(fixture), ['p_b', 'p_c', 'p_d', 'p_default', 'p_f', 'p_now']);

      const second = await runCli(
        cleanupArgs(fixture, '--older-than', '7d', '--drop-partitions', '--include-dead-letters'),
      );
      assert.equal(second.code, 0, second.stderr);
      assert.match(second.stdout, /dropped partition \S*p_c \(21 rows\)/);
      assert.match(second.stdout, /dropped 1 partitions \(21 rows\)/);
      assert.deepEqual(await listPartitions(fixture), ['p_b', 'p_d', 'p_default', 'p_f', 'p_now']);

      assert.deepEqual(await pendingRows(), ['pending1'], 'the pending row is still there');
    } finally {
      await fixture.cleanUp();
    }
  });

  it('--drop-partitions refuses a table that is not partitioned (exit 3)', async () => {
    const fixture = await createWalFixture();
    try {
      const result = await runCli(cleanupArgs(fixture, '--older-than', '7d', '--drop-partitions'));
      assert.equal(result.code, 3, result.stderr);
      assert.match(result.stderr, /is not partitioned: run walbox cleanup without --drop-partitions/);
    } finally {
      await fixture.cleanUp();
    }
  });
});
