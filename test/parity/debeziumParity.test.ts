/**
 * Parity with Debezium's outbox EventRouter (issue #17): the same rows go into a Debezium-shaped outbox table,
 * Debezium 3.4 on Kafka Connect (configured as Debezium's outbox docs show) and walbox with `--outbox-shape
 * debezium` each publish them to topics of their own, and every event is compared field by field: published or
 * not, topic suffix, partition, key bytes, value bytes, each header, header order, timestamp, and its position
 * among its key's events. Every field is equal except the differences in KNOWN_DIFFERENCES, each with the setting
 * that removes it; a listed difference that no longer shows fails too, so the list (and the guide,
 * docs/coming-from-debezium.md) stays true.
 *
 * Two scenarios, each with its own table (walbox marks rows processed, so one table serves one walbox relay):
 * "defaults" (both systems' defaults) and "event time" (both stamp records with the `occurred_at` column).
 *
 * Prints the measured table; PARITY_REPORT=<path> also writes it there. Runs as its own phase of `npm test`
 * (scripts/test.mjs); alone: `node scripts/test.mjs parity` (Connect and Debezium come from Maven Central into
 * .cache/connect the first time).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

import { Kafka, logLevel, type Admin, type Consumer, type IHeaders } from 'kafkajs';
import pg from 'pg';

import { startRelayProcess, type RelayProcess } from '../support/relayProcess.js';
import { runCli } from '../support/runCli.js';
import { dropSchema, withClient } from '../support/testDatabase.js';
import { requireDatabaseUrl, requireKafkaBrokers, uniqueName } from '../support/testEnv.js';
import { waitFor } from '../support/waitFor.js';
import {
  CONTEXT_HEADERS_FIELD,
  compareEvent,
  eventId,
  markdownTable,
  positionsByKey,
  type FieldOutcome,
  type RawRecord,
  type TableLine,
} from './parityRecords.js';
import { AGGREGATE_TYPES, parityTransactions, type OutboxRow } from './parityRows.js';

const ROOT = join(__dirname, '..', '..', '..');
const STREAMING = /streaming from the replication slot/;
const PARTITIONS = 3;

/** The parts of scripts/bench/debezium.mjs (plain ESM, loaded at run time) this test uses. */
interface DebeziumModule {
  readonly DEBEZIUM_VERSION: string;
  readonly CONNECT_VERSION: string;
  fetchConnect(options: { root: string; log?: (m: string) => void }): Promise<unknown>;
  startDebezium(
    options: {
      root: string;
      runDir: string;
      brokers: string;
      databaseUrl: string;
      schema: string;
      log?: (m: string) => void;
      extraConnectors?: readonly DebeziumConnector[];
    } & DebeziumConnector,
  ): Promise<DebeziumHandle>;
}
interface DebeziumConnector {
  readonly name: string;
  readonly slot: string;
  readonly table: string;
  readonly publication: string;
  readonly topicPrefix: string;
  readonly eventRouter: Readonly<Record<string, string>>;
  readonly connectorConfig?: Readonly<Record<string, string | boolean>>;
}
interface DebeziumHandle {
  readonly logFile: string;
  stop(timeoutMs?: number): Promise<void>;
}

function loadDebezium(): Promise<DebeziumModule> {
  // A variable specifier keeps TypeScript from resolving (and typing) the .mjs file; Node loads it as ESM.
  const specifier = join(ROOT, 'scripts', 'bench', 'debezium.mjs');
  return import(specifier) as Promise<DebeziumModule>;
}

/**
 * Debezium's side, as its outbox docs show it: the EventRouter with its default column names (id, aggregatetype,
 * aggregateid, type, payload) and route (outbox.event.${routedByValue}), plus the docs' header example
 * (table.fields.additional.placement=type:header:eventType) and our extra column. The converters, written down:
 *   key.converter=org.apache.kafka.connect.storage.StringConverter     (key: aggregateid as UTF-8 text)
 *   value.converter=org.apache.kafka.connect.storage.StringConverter   (value: the jsonb text as is)
 *   header.converter=org.apache.kafka.connect.storage.SimpleHeaderConverter   (Connect's default)
 * and extended.headers.enabled=true, Debezium 3.x's default (debezium.mjs turns it off for the benchmark).
 * The connector reads walbox's publication (publish = insert), so walbox's processed_at updates never reach it.
 */
const DEBEZIUM_CONNECTOR_CONFIG = {
  'key.converter': 'org.apache.kafka.connect.storage.StringConverter',
  'value.converter': 'org.apache.kafka.connect.storage.StringConverter',
  'header.converter': 'org.apache.kafka.connect.storage.SimpleHeaderConverter',
  'extended.headers.enabled': true,
} as const;
const HEADER_PLACEMENT = 'type:header:eventType,tenant:header';
const WALBOX_HEADER_COLUMNS = 'type:eventType,tenant';

type ScenarioName = 'defaults' | 'event time';

interface Scenario {
  readonly name: ScenarioName;
  readonly table: string;
  readonly debeziumPrefix: string;
  readonly walboxPrefix: string;
  /** The EventRouter's settings (without `transforms.outbox.`); the rest are Debezium's defaults. */
  readonly eventRouter: Readonly<Record<string, string>>;
  /** walbox run's flags besides the connections, table, publication and slot. */
  readonly walboxArgs: readonly string[];
}

const SCENARIOS: readonly Scenario[] = [
  {
    name: 'defaults',
    table: 'outbox_defaults',
    debeziumPrefix: 'outbox.event.',
    walboxPrefix: 'walbox.event.',
    eventRouter: { 'table.fields.additional.placement': HEADER_PLACEMENT },
    walboxArgs: [
      '--outbox-shape',
      'debezium',
      '--topic-template',
      'walbox.event.${routedByValue}',
      '--header-columns',
      WALBOX_HEADER_COLUMNS,
    ],
  },
  {
    name: 'event time',
    table: 'outbox_event_time',
    debeziumPrefix: 'outbox.eventtime.',
    walboxPrefix: 'walbox.eventtime.',
    eventRouter: {
      'table.fields.additional.placement': HEADER_PLACEMENT,
      'table.field.event.timestamp': 'occurred_at',
      'route.topic.replacement': 'outbox.eventtime.${routedByValue}',
    },
    walboxArgs: [
      '--outbox-shape',
      'debezium',
      '--topic-template',
      'walbox.eventtime.${routedByValue}',
      '--header-columns',
      WALBOX_HEADER_COLUMNS,
      '--timestamp-column',
      'occurred_at',
      '--kafka-timestamp',
      'event',
    ],
  },
];

/** What the accept check of a known difference sees. */
interface Measured {
  readonly row: OutboxRow;
  readonly outcome: FieldOutcome;
  readonly debezium: RawRecord | undefined;
  readonly walbox: RawRecord | undefined;
  /** Date.now() before the first row was written and after the last record was consumed. */
  readonly window: { readonly from: number; readonly to: number };
}

/**
 * A difference that remains, with what each side does and the one setting that removes it. `applies` says which
 * events differ (in the others the field must be equal), `accept` that the measured values are the explained ones.
 */
interface KnownDifference {
  readonly scenario: ScenarioName | 'both';
  readonly field: string;
  readonly applies: (row: OutboxRow) => boolean;
  readonly debezium: string;
  readonly walbox: string;
  readonly setting: string;
  readonly accept: (m: Measured) => boolean;
}

const within = (t: number | undefined, w: Measured['window']): boolean =>
  t !== undefined && t >= w.from - 1000 && t <= w.to + 1000;

const KNOWN_DIFFERENCES: readonly KnownDifference[] = [
  {
    scenario: 'both',
    field: CONTEXT_HEADERS_FIELD,
    applies: () => true,
    debezium:
      'adds four context headers to every record: connectorLogicalName (its topic.prefix), taskId, connectorName (postgresql), runId',
    walbox: 'sends none',
    setting: 'Debezium: extended.headers.enabled=false',
    accept: ({ outcome }) =>
      outcome.walbox === '(none)' &&
      /^connectorLogicalName=.+, taskId=0, connectorName=postgresql, runId=.+$/.test(outcome.debezium),
  },
  {
    scenario: 'both',
    field: 'header tenant',
    applies: (row) => row.tenant === null,
    debezium: 'sends a header column that is NULL as a header with a null value',
    walbox: 'sends no header for a NULL column',
    setting:
      'none: kafkajs 2.2.4 cannot send a header with a null value; a consumer should treat a missing and a null header alike',
    accept: ({ outcome }) => outcome.debezium === '(null)' && outcome.walbox === '(absent)',
  },
  {
    scenario: 'defaults',
    field: 'timestamp',
    applies: () => true,
    debezium: "the time Debezium processed the change (the envelope's ts_ms)",
    walbox: 'the event time: created_at, the start of the inserting transaction (now())',
    setting:
      'both: a `timestamp` column as the event time (Debezium: table.field.event.timestamp=<column>; walbox: --timestamp-column <column>), as in scenario "event time"; walbox --kafka-timestamp send comes closest to Debezium\'s default',
    accept: ({ debezium, walbox, window }) =>
      within(debezium?.timestamp, window) &&
      within(walbox?.timestamp, window) &&
      (debezium?.timestamp ?? 0) >= (walbox?.timestamp ?? 0),
  },
  {
    scenario: 'event time',
    field: 'timestamp',
    applies: (row) => row.occurredAt === null,
    debezium: 'falls back to the time it processed the change (ts_ms) when the column is NULL',
    walbox: 'falls back to the time it sends the record when the column is NULL',
    setting: 'none: keep the event time column NOT NULL',
    accept: ({ debezium, walbox, window }) =>
      within(debezium?.timestamp, window) && within(walbox?.timestamp, window),
  },
];

const listedFor = (scenario: ScenarioName, field: string): KnownDifference[] =>
  KNOWN_DIFFERENCES.filter((k) => (k.scenario === 'both' || k.scenario === scenario) && k.field === field);

/** A consumer (own group) of every topic of the run, keeping raw bytes and header order. */
async function startConsumer(
  brokers: string[],
  topics: readonly string[],
  sink: RawRecord[],
): Promise<Consumer> {
  const kafka = new Kafka({ clientId: 'walbox-parity', brokers, logLevel: logLevel.NOTHING });
  const consumer = kafka.consumer({ groupId: uniqueName('parity'), maxWaitTimeInMs: 200 });
  await consumer.connect();
  await consumer.subscribe({ topics: [...topics], fromBeginning: true });
  await consumer.run({
    eachMessage: ({ topic, partition, message }) => {
      // kafkajs decodes a header sent with a null value as null, though IHeaders does not say so
      const headers = Object.entries(message.headers ?? ({} satisfies IHeaders)).flatMap(([name, value]) => {
        const values = value as Buffer | string | (Buffer | string)[] | null | undefined;
        const list = Array.isArray(values) ? values : [values];
        return list.map((v) => [name, v === null || v === undefined ? null : Buffer.from(v)] as const);
      });
      sink.push({
        topic,
        partition,
        offset: BigInt(message.offset),
        key: message.key,
        value: message.value,
        headers,
        timestamp: Number(message.timestamp),
      });
      return Promise.resolve();
    },
  });
  return consumer;
}

/** One scenario's events compared: the table lines, what failed, which listed differences showed. */
function compareScenario(
  s: Scenario,
  rows: readonly OutboxRow[],
  records: readonly RawRecord[],
  deadLetters: ReadonlyMap<string, string>,
  window: Measured['window'],
): { lines: TableLine[]; problems: string[]; shown: Set<KnownDifference> } {
  const problems: string[] = [];
  const shown = new Set<KnownDifference>();
  const ids = new Set(rows.map((r) => r.id));
  const sides = {
    debezium: records.filter((r) => r.topic.startsWith(s.debeziumPrefix)),
    walbox: records.filter((r) => r.topic.startsWith(s.walboxPrefix)),
  };
  const byId = { debezium: new Map<string, RawRecord>(), walbox: new Map<string, RawRecord>() };
  for (const side of ['debezium', 'walbox'] as const) {
    for (const r of sides[side]) {
      const id = eventId(r);
      if (!ids.has(id)) problems.push(`${s.name}: ${side} published an event of no row: ${id}`);
      else if (byId[side].has(id)) problems.push(`${s.name}: ${side} published ${id} twice`);
      else byId[side].set(id, r);
    }
  }
  // order among the events of a key, counting only the events both sides published
  const onBoth = (r: RawRecord): boolean => byId.debezium.has(eventId(r)) && byId.walbox.has(eventId(r));
  const positions = {
    debezium: positionsByKey(sides.debezium.filter(onBoth)),
    walbox: positionsByKey(sides.walbox.filter(onBoth)),
  };
  const perField = new Map<
    string,
    { events: number; equal: number; example: Measured; firstDiff?: Measured }
  >();

  for (const row of rows) {
    const d = byId.debezium.get(row.id);
    const w = byId.walbox.get(row.id);
    const publishedAs = (r: RawRecord | undefined, dead?: string): string => {
      if (r !== undefined) return r.value === null ? 'yes, with a null value' : 'yes';
      return dead === undefined ? 'no' : `no: dead-lettered (${dead})`;
    };
    const published: FieldOutcome = {
      field: 'published',
      debezium: publishedAs(d),
      walbox: publishedAs(w, deadLetters.get(row.id)),
      equal: publishedAs(d) === publishedAs(w),
    };
    const outcomes =
      d === undefined || w === undefined
        ? [published]
        : [
            published,
            ...compareEvent(
              { record: d, prefix: s.debeziumPrefix, position: positions.debezium.get(d) ?? -1 },
              { record: w, prefix: s.walboxPrefix, position: positions.walbox.get(w) ?? -1 },
            ),
          ];
    for (const outcome of outcomes) {
      const measured: Measured = { row, outcome, debezium: d, walbox: w, window };
      const stats = perField.get(outcome.field) ?? { events: 0, equal: 0, example: measured };
      stats.events += 1;
      if (outcome.equal) stats.equal += 1;
      else stats.firstDiff ??= measured;
      perField.set(outcome.field, stats);
      if (outcome.equal) continue;
      const listed = listedFor(s.name, outcome.field).find((k) => k.applies(row));
      const where = `${s.name}: ${outcome.field} of "${row.note}" (${row.id})`;
      const values = `Debezium ${outcome.debezium}, walbox ${outcome.walbox}`;
      if (listed === undefined) problems.push(`${where} differs: ${values}`);
      else if (!listed.accept(measured)) problems.push(`${where} differs, not as listed: ${values}`);
      else shown.add(listed);
    }
  }

  const lines = [...perField].map(([field, stats]): TableLine => {
    const m = stats.firstDiff ?? stats.example;
    const listed = listedFor(s.name, field).filter((k) => shown.has(k));
    const verdict =
      stats.equal === stats.events
        ? 'equal'
        : listed.length > 0
          ? listed
              .map((k) => `listed: Debezium ${k.debezium}; walbox ${k.walbox}. Setting: ${k.setting}`)
              .join(' / ')
          : 'UNEXPECTED';
    return {
      scenario: s.name,
      field,
      events: stats.events,
      equal: stats.equal,
      example: { debezium: m.outcome.debezium, walbox: m.outcome.walbox },
      verdict,
    };
  });
  return { lines, problems, shown };
}

describe('parity with the outbox EventRouter of Debezium 3.4', () => {
  const databaseUrl = requireDatabaseUrl();
  const brokers = requireKafkaBrokers();
  const run = uniqueName('parity');
  const schema = run;
  // aggregate types of the run's own (and so topics of its own): Order_<hex>, customer_<hex>, shipment.v2_<hex>
  const typeName = (t: string): string => `${t}_${run.slice('parity_'.length)}`;
  const publication = (s: Scenario): string => `${run}_${s.table}`;
  const walboxSlot = (s: Scenario): string => `${run}_w_${s.table}`;
  const debeziumSlot = (s: Scenario): string => `${run}_d_${s.table}`;
  const table = (s: Scenario): string => `${pg.escapeIdentifier(schema)}.${pg.escapeIdentifier(s.table)}`;
  /** The flags walbox's migrate and relay share for a scenario's table. */
  const tableArgs = (s: Scenario): string[] => [
    '--database-url',
    databaseUrl,
    '--schema',
    schema,
    '--table',
    s.table,
    '--publication',
    publication(s),
  ];
  const topics = SCENARIOS.flatMap((s) =>
    AGGREGATE_TYPES.flatMap((t) => [s.debeziumPrefix + typeName(t), s.walboxPrefix + typeName(t)]),
  );
  const runDir = mkdtempSync(join(tmpdir(), 'walbox-parity-'));
  const relays: RelayProcess[] = [];
  let debeziumModule: DebeziumModule | undefined;
  let debezium: DebeziumHandle | undefined;
  let admin: Admin | undefined;
  let consumer: Consumer | undefined;
  let failed = false;

  before(
    async () => {
      debeziumModule = await loadDebezium();
      await debeziumModule.fetchConnect({ root: ROOT, log: (m) => console.error(`[debezium] ${m}`) });
    },
    { timeout: 15 * 60_000 },
  );

  after(async () => {
    await consumer?.disconnect().catch(() => undefined);
    for (const relay of relays) {
      const exit = await relay.stop('SIGTERM');
      if (failed || exit.code !== 0)
        console.error(`walbox relay (exit ${exit.code}):\n${relay.lines.slice(-30).join('\n')}`);
    }
    await debezium?.stop();
    if (failed && debezium !== undefined) {
      const tail = readFileSync(debezium.logFile, 'utf8').split('\n').slice(-60).join('\n');
      console.error(`--- last lines of ${debezium.logFile} ---\n${tail}`);
    }
    await withClient(async (client) => {
      for (const s of SCENARIOS) {
        for (const slot of [walboxSlot(s), debeziumSlot(s)]) {
          await client
            .query(
              'SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = $1',
              [slot],
            )
            .catch(() => undefined);
        }
        await client.query(`DROP PUBLICATION IF EXISTS ${pg.escapeIdentifier(publication(s))}`);
      }
    }, databaseUrl);
    await dropSchema(schema, undefined, databaseUrl);
    if (admin !== undefined) {
      await admin.deleteTopics({ topics }).catch(() => undefined);
      await admin.disconnect();
    }
    if (!failed) rmSync(runDir, { recursive: true, force: true });
  });

  it(
    'publishes what Debezium publishes, byte for byte, but for the listed differences',
    { timeout: 10 * 60_000 },
    async () => {
      try {
        assert.ok(debeziumModule, 'the Debezium module loaded');
        // 1. Debezium-shaped tables (its default columns, an extra header column, an event time column of a type
        //    its table.field.event.timestamp accepts: `timestamp`, not timestamptz or bigint), adopted by walbox.
        await withClient(async (client) => {
          await client.query(`CREATE SCHEMA ${pg.escapeIdentifier(schema)}`);
          for (const s of SCENARIOS) {
            await client.query(
              `CREATE TABLE ${table(s)} (
                 id uuid PRIMARY KEY,
                 aggregatetype varchar(255) NOT NULL,
                 aggregateid varchar(255) NOT NULL,
                 type varchar(255) NOT NULL,
                 payload jsonb,
                 tenant varchar(64),
                 occurred_at timestamp
               )`,
            );
          }
        }, databaseUrl);
        for (const s of SCENARIOS) {
          const migrated = await runCli(['migrate', ...tableArgs(s), '--outbox-shape', 'debezium']);
          assert.equal(migrated.code, 0, `walbox migrate: ${migrated.stderr}`);
        }

        // 2. The topics, all with the same partition count (the broker does not create topics itself).
        admin = new Kafka({ clientId: 'walbox-parity-admin', brokers, logLevel: logLevel.NOTHING }).admin();
        await admin.connect();
        await admin.createTopics({
          waitForLeaders: true,
          topics: topics.map((topic) => ({ topic, numPartitions: PARTITIONS, replicationFactor: 1 })),
        });

        // 3. Debezium (one Connect worker, a connector per scenario) and walbox (a relay per scenario), streaming.
        const [first, ...rest] = SCENARIOS.map((s): DebeziumConnector => ({
          name: `parity-${s.table}`,
          slot: debeziumSlot(s),
          table: s.table,
          publication: publication(s),
          topicPrefix: `${run}_${s.table}`,
          eventRouter: s.eventRouter,
          connectorConfig: DEBEZIUM_CONNECTOR_CONFIG,
        }));
        assert.ok(first);
        debezium = await debeziumModule.startDebezium({
          root: ROOT,
          runDir,
          brokers: brokers.join(','),
          databaseUrl,
          schema,
          ...first,
          extraConnectors: rest,
          log: (m) => console.error(`[debezium] ${m}`),
        });
        for (const s of SCENARIOS) {
          const relay = startRelayProcess([
            ...tableArgs(s),
            '--kafka-brokers',
            brokers.join(','),
            '--slot',
            walboxSlot(s),
            '--metrics-port',
            '0',
            '--status-interval',
            '1s',
            ...s.walboxArgs,
          ]);
          relays.push(relay);
          await relay.waitForLine(STREAMING);
        }

        // 4. The same rows, in the same transactions, into both tables; then every event on both sides (or, on
        //    walbox's, dead-lettered in its row).
        const records: RawRecord[] = [];
        consumer = await startConsumer(brokers, topics, records);
        const transactions = parityTransactions(typeName);
        const rows = transactions.flat();
        const from = Date.now();
        for (const transaction of transactions) {
          for (const s of SCENARIOS) {
            await withClient(async (client) => {
              await client.query('BEGIN');
              for (const r of transaction) {
                await client.query(
                  `INSERT INTO ${table(s)} (id, aggregatetype, aggregateid, type, payload, tenant, occurred_at)
                   VALUES ($1, $2, $3, $4, $5::jsonb, $6, $7::timestamp)`,
                  [r.id, r.aggregatetype, r.aggregateid, r.type, r.payload, r.tenant, r.occurredAt],
                );
              }
              await client.query('COMMIT');
            }, databaseUrl);
          }
        }
        const deadLetters = (s: Scenario): Promise<Map<string, string>> =>
          withClient(async (client) => {
            const dead = await client.query<{ id: string; last_error: string | null }>(
              `SELECT id::text, last_error FROM ${table(s)} WHERE dead_lettered_at IS NOT NULL`,
            );
            return new Map(dead.rows.map((r) => [r.id, r.last_error ?? '']));
          }, databaseUrl);
        const idsOn = (prefix: string): Set<string> =>
          new Set(records.filter((r) => r.topic.startsWith(prefix)).map(eventId));
        const settled = async (): Promise<boolean> => {
          for (const s of SCENARIOS) {
            const dead = await deadLetters(s);
            const onDebezium = idsOn(s.debeziumPrefix);
            const onWalbox = idsOn(s.walboxPrefix);
            if (rows.some((r) => !onDebezium.has(r.id) || !(onWalbox.has(r.id) || dead.has(r.id))))
              return false;
          }
          return true;
        };
        // a timeout shows below, as the events missing on one side
        await waitFor(settled, {
          timeoutMs: 120_000,
          intervalMs: 250,
          what: 'every event on both sides',
        }).catch((error: unknown) => {
          console.error(error);
        });
        await new Promise((resolve) => setTimeout(resolve, 1000)); // a duplicate would show by now
        const window = { from, to: Date.now() };

        // 5. Every event, field by field.
        const lines: TableLine[] = [];
        const problems: string[] = [];
        const shown = new Set<KnownDifference>();
        for (const s of SCENARIOS) {
          const result = compareScenario(s, rows, records, await deadLetters(s), window);
          lines.push(...result.lines);
          problems.push(...result.problems);
          for (const k of result.shown) shown.add(k);
        }
        for (const k of KNOWN_DIFFERENCES) {
          if (!shown.has(k)) {
            problems.push(
              `a listed difference is gone (remove it from KNOWN_DIFFERENCES and the guide): ${k.scenario}: ${k.field}: walbox ${k.walbox}`,
            );
          }
        }

        const report = [
          `## walbox --outbox-shape debezium vs Debezium ${debeziumModule.DEBEZIUM_VERSION} EventRouter (Kafka Connect ${debeziumModule.CONNECT_VERSION})`,
          '',
          `${rows.length} events per scenario in ${transactions.length} transactions, ${PARTITIONS} partitions per topic. ` +
            'Debezium: key.converter and value.converter StringConverter, header.converter SimpleHeaderConverter, ' +
            `table.fields.additional.placement=${HEADER_PLACEMENT}, otherwise its defaults; walbox: --outbox-shape debezium ` +
            `--header-columns ${WALBOX_HEADER_COLUMNS}. Scenario "event time": Debezium ` +
            'table.field.event.timestamp=occurred_at (a `timestamp` column), walbox --timestamp-column occurred_at.',
          '',
          markdownTable(lines),
          '',
        ].join('\n');
        console.log(report);
        const reportPath = process.env['PARITY_REPORT'];
        if (reportPath !== undefined && reportPath !== '') writeFileSync(reportPath, report);
        assert.deepEqual(problems, [], 'every difference is listed, explained and still there');
      } catch (error) {
        failed = true;
        throw error;
      }
    },
  );
});
