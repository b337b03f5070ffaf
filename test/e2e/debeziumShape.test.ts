import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { Kafka, logLevel } from 'kafkajs';
import pg from 'pg';

import { startRelayProcess, type RelayProcess } from '../support/relayProcess.js';
import { runCli } from '../support/runCli.js';
import { dropSchema, withClient } from '../support/testDatabase.js';
import { requireDatabaseUrl, requireKafkaBrokers, uniqueName } from '../support/testEnv.js';
import { TopicReader, type ConsumedMessage } from '../support/topicReader.js';

/** Debezium's documented outbox table, plus a tenant column (sent as a header) and an epoch-ms event time. */
const DEBEZIUM_TABLE = `(
  id            uuid         NOT NULL PRIMARY KEY,
  aggregatetype varchar(255) NOT NULL,
  aggregateid   varchar(255) NOT NULL,
  type          varchar(255) NOT NULL,
  payload       jsonb,
  tenant        text,
  occurred_at   bigint       NOT NULL
)`;

/** Rows with a NULL payload (tombstones) and with an event time Kafka refuses (over an hour ahead). */
const TOMBSTONES = new Set([7, 13]);
const FUTURE = new Set([9, 12]);
const DAY_MS = 86_400_000;

interface Written {
  readonly id: string;
  readonly aggregateid: string;
  readonly payload: string | null;
  readonly tenant: string | null;
  readonly occurredAt: number;
}

describe('a Debezium-shaped outbox table', () => {
  it('is adopted in place by walbox migrate --outbox-shape debezium and delivered by both modes', async () => {
    const databaseUrl = requireDatabaseUrl();
    const brokers = requireKafkaBrokers().join(',');
    const schema = uniqueName('dbz');
    const publication = uniqueName('pub');
    const slot = uniqueName('slot');
    const prefix = uniqueName('dt');
    const table = `${pg.escapeIdentifier(schema)}.outbox`;
    const common = ['--database-url', databaseUrl, '--schema', schema, '--table', 'outbox'];
    const shape = ['--outbox-shape', 'debezium'];
    const relays: RelayProcess[] = [];
    let reader: TopicReader | undefined;
    let n = 0;
    const write = async (count: number): Promise<Written[]> => {
      const rows: Written[] = [];
      for (let i = 0; i < count; i++, n++) {
        rows.push({
          id: crypto.randomUUID(),
          aggregateid: `o-${String(n % 3)}`,
          payload: TOMBSTONES.has(n)
            ? null
            : `{"n": ${String(n)}, "note": "naïve  café", "nested": {"list": [1, 2.50, "x"]}}`,
          tenant: n % 2 === 0 ? 'acme' : null,
          occurredAt: FUTURE.has(n) ? Date.now() + DAY_MS : 1_700_000_000_000 + n,
        });
      }
      await withClient(async (client) => {
        for (const row of rows) {
          await client.query(
            `INSERT INTO ${table} (id, aggregatetype, aggregateid, type, payload, tenant, occurred_at)
             VALUES ($1, 'order', $2, 'OrderPlaced', $3::jsonb, $4, $5)`,
            [row.id, row.aggregateid, row.payload, row.tenant, row.occurredAt],
          );
        }
      }, databaseUrl);
      return rows;
    };
    try {
      await withClient(async (client) => {
        await client.query(`CREATE SCHEMA ${pg.escapeIdentifier(schema)}`);
        await client.query(`CREATE TABLE ${table} ${DEBEZIUM_TABLE}`);
      }, databaseUrl);
      const before = await write(5);

      const migrated = await runCli(['migrate', ...common, ...shape, '--publication', publication]);
      assert.equal(migrated.code, 0, migrated.stderr);
      assert.match(migrated.stdout, /applied 000001_create_outbox\.sql/);
      const again = await runCli(['migrate', ...common, ...shape, '--publication', publication]);
      assert.match(again.stdout, /already up to date/);
      const columns = await withClient(
        async (client) =>
          (
            await client.query<{ column_name: string; data_type: string }>(
              `SELECT column_name, data_type FROM information_schema.columns
                WHERE table_schema = $1 AND table_name = 'outbox' ORDER BY ordinal_position`,
              [schema],
            )
          ).rows.map((r) => `${r.column_name} ${r.data_type}`),
        databaseUrl,
      );
      // The user's columns first, as they were; then only walbox's bookkeeping.
      assert.deepEqual(columns, [
        'id uuid',
        'aggregatetype character varying',
        'aggregateid character varying',
        'type character varying',
        'payload jsonb',
        'tenant text',
        'occurred_at bigint',
        'attempts integer',
        'created_at timestamp with time zone',
        'processed_at timestamp with time zone',
        'headers jsonb',
        'retry_after timestamp with time zone',
        'last_error text',
        'dead_lettered_at timestamp with time zone',
        'seq bigint',
      ]);

      const admin = new Kafka({ brokers: brokers.split(','), logLevel: logLevel.NOTHING }).admin();
      await admin.connect();
      await admin.createTopics({
        waitForLeaders: true,
        topics: [{ topic: `${prefix}.order`, numPartitions: 3, replicationFactor: 1 }],
      });
      await admin.disconnect();
      reader = await TopicReader.start([`${prefix}.order`]);
      const relayArgs = (...extra: string[]): string[] => [
        ...common,
        ...shape,
        '--kafka-brokers',
        brokers,
        '--publication',
        publication,
        '--slot',
        slot,
        '--topic-template',
        `${prefix}.\${routedByValue}`,
        '--header-columns',
        'tenant',
        '--timestamp-column',
        'occurred_at',
        '--metrics-port',
        '0',
        ...extra,
      ];
      // WAL mode: the rows written before the slot existed are caught up from the table, the next ones streamed.
      const wal = startRelayProcess(relayArgs());
      relays.push(wal);
      await wal.waitForLine(/streaming from the replication slot/);
      const streamed = await write(6);
      const activeReader = reader;
      await activeReader.waitForIds([...before, ...streamed].map((r) => r.id));
      assert.equal((await wal.stop('SIGTERM')).code, 0);

      // Poll mode on the same table.
      const polled = await write(4);
      const poll = startRelayProcess(relayArgs('--mode', 'poll', '--poll-interval', '200ms'));
      relays.push(poll);
      await activeReader.waitForIds(polled.map((r) => r.id));
      assert.equal((await poll.stop('SIGTERM')).code, 0);

      const all = [...before, ...streamed, ...polled];
      const finished = Date.now();
      const byId = new Map(activeReader.messages.map((m) => [m.headers['id'], m]));
      assert.equal(activeReader.messages.length, all.length, 'each event once');
      for (const row of all) {
        const message = byId.get(row.id) as ConsumedMessage;
        const stored = await withClient(
          async (client) =>
            (
              await client.query<{ p: string }>(`SELECT payload::text AS p FROM ${table} WHERE id = $1`, [
                row.id,
              ])
            ).rows[0]?.p,
          databaseUrl,
        );
        assert.deepEqual(
          {
            key: message.key,
            value: message.nullValue ? null : message.value,
            headers: message.headers,
            timestamp: FUTURE.has(all.indexOf(row)) ? 'refused: the send time' : message.timestamp,
          },
          {
            key: row.aggregateid,
            value: stored,
            headers: row.tenant === null ? { id: row.id } : { id: row.id, tenant: row.tenant },
            timestamp: FUTURE.has(all.indexOf(row)) ? 'refused: the send time' : row.occurredAt,
          },
        );
        if (FUTURE.has(all.indexOf(row)))
          assert.ok(message.timestamp <= finished, 'the send time, not the future');
      }
      // Per aggregate, in insert order.
      for (const aggregate of ['o-0', 'o-1', 'o-2']) {
        assert.deepEqual(
          activeReader.messages.filter((m) => m.key === aggregate).map((m) => m.headers['id']),
          all.filter((r) => r.aggregateid === aggregate).map((r) => r.id),
        );
      }
      const pending = await withClient(
        async (client) =>
          (await client.query<{ n: string }>(`SELECT count(*) AS n FROM ${table} WHERE processed_at IS NULL`))
            .rows[0]?.n,
        databaseUrl,
      );
      assert.equal(pending, '0');
      assert.equal(all.filter((r) => r.payload === null).length, 2, 'tombstones in both modes');
    } catch (error) {
      for (const [i, relay] of relays.entries())
        console.error(`relay ${String(i + 1)}:\n${relay.lines.slice(-30).join('\n')}`);
      throw error;
    } finally {
      for (const relay of relays) await relay.stop('SIGKILL');
      await reader?.stop();
      await withClient(
        (client) =>
          client.query(
            'SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = $1 AND NOT active',
            [slot],
          ),
        databaseUrl,
      );
      await dropSchema(schema, publication, databaseUrl);
    }
  });

  it('prints the DDL that adopts it, in its own column names', async () => {
    const result = await runCli([
      'migrate',
      '--print-sql',
      '--outbox-shape',
      'debezium',
      '--table',
      'outbox',
    ]);
    assert.equal(result.code, 0, result.stderr);
    assert.match(
      result.stdout,
      /ALTER TABLE IF EXISTS "public"\."outbox"\n\s+ADD COLUMN IF NOT EXISTS attempts/,
    );
    assert.match(result.stdout, /"aggregatetype" varchar\(100\) NOT NULL/);
    assert.match(result.stdout, /ON "public"\."outbox" \("aggregatetype", "aggregateid"\)/);
  });

  it('refuses a column whose text differs between the WAL and the table (bytea payload, boolean header), with the fix', async () => {
    const databaseUrl = requireDatabaseUrl();
    const schema = uniqueName('dbzb');
    const publication = uniqueName('pub');
    try {
      await withClient(async (client) => {
        await client.query(`CREATE SCHEMA ${pg.escapeIdentifier(schema)}`);
        await client.query(
          `CREATE TABLE ${pg.escapeIdentifier(schema)}.outbox (id uuid PRIMARY KEY, aggregatetype text NOT NULL,
             aggregateid text NOT NULL, type text NOT NULL, payload bytea, urgent boolean, body text)`,
        );
      }, databaseUrl);
      const common = ['--database-url', databaseUrl, '--schema', schema, '--table', 'outbox'];
      const shape = ['--outbox-shape', 'debezium', '--publication', publication];
      assert.equal((await runCli(['migrate', ...common, ...shape])).code, 0);
      const result = await runCli([
        'run',
        ...common,
        ...shape,
        '--kafka-brokers',
        requireKafkaBrokers().join(','),
      ]);
      assert.equal(result.code, 3, result.stderr);
      assert.match(result.stderr, /column payload \(--payload-column\) is bytea/);
      // A boolean is `t` in the WAL and `true` read from the table: the same event would get two header values.
      const header = await runCli([
        'run',
        ...common,
        ...shape,
        '--payload-column',
        'body',
        '--header-columns',
        'urgent',
        '--kafka-brokers',
        requireKafkaBrokers().join(','),
      ]);
      assert.equal(header.code, 3, header.stderr);
      assert.match(header.stderr, /column urgent \(--header-columns\) is boolean/);
    } finally {
      await dropSchema(schema, publication, databaseUrl);
    }
  });
});
