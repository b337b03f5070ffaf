#!/usr/bin/env node
// node scripts/bench/stageCost.mjs (after `npm run build`; DATABASE_URL names a PostgreSQL with wal_level=logical
// on this machine, e.g. the one `npm run stack -- up` prints): what each stage of a WAL-mode drain costs per
// event on its own, one stage at a time, with nothing else competing for the cores. The drains of `npm run bench`
// measure the same work with every party running at once; the difference is what sharing two cores adds.
//
// PostgreSQL (CPU of the one backend doing the work): decoding the INSERTs with pgoutput, the already-processed
// check a backlog's rows get and the marking UPDATE, as the relay sends them (walbox's own PgOutboxStore, 200 rows
// per statement), decoding the marking's WAL.
// The relay (this process's CPU, no I/O): decoding pgoutput into records, making Kafka messages (topic, headers,
// size estimate, as KafkaSink.publish does), kafkajs choosing their partitions and grouping them, kafkajs
// encoding them into produce requests of 200 records.
import { createRequire } from 'node:module';
import { join } from 'node:path';

import pg from 'pg';

import { ROOT } from '../stack/stack.mjs';
import { migrate } from './systems.mjs';
import { cpuSeconds } from './measure.mjs';
import { writeBacklog } from './workloads.mjs';

const EVENTS = 100_000;
const BATCH = 200;
const SAMPLE_MESSAGES = 6_000;
// STAGE_COST_DIST=<another build's dist directory> measures that build (a before/after in one sitting).
const DIST = process.env.STAGE_COST_DIST ?? join(ROOT, 'dist');
const dist = (path) => import(join(DIST, path));
const { decodePgoutput } = await dist('source/wal/pgoutput/decodePgoutput.js');
const { OutboxRelation } = await dist('source/wal/toOutboxRecord.js');
const { DEFAULT_COLUMNS } = await dist('outbox/outboxColumns.js');
const { resolveTopic } = await dist('core/topicName.js');
const { explainBadHeaders } = await dist('core/toEventHeaders.js');
const { toKafkaMessage, estimateMessageBytes } = await dist('sink/kafka/toKafkaMessage.js');
const { PgOutboxStore } = await dist('db/pgOutboxStore.js');
const kafkajs = createRequire(join(ROOT, 'node_modules', 'kafkajs', 'package.json'));
// The produce request the measured build's relay uses (walbox's, if it has one): installed before kafkajs's
// produce requests load, as the relay's load order does.
await dist('sink/kafka/speedUpProduceRequest.js').then(
  (module) => module.speedUpProduceRequest(),
  (error) => {
    if (error.code !== 'ERR_MODULE_NOT_FOUND') throw error;
  },
);
const produceRequest = kafkajs('./src/protocol/requests/produce/v3/request.js');
const { Partitioners } = kafkajs('./index.js');
// The partitioner and the grouping by partition the measured build's producer uses: walbox's, if it has them,
// else kafkajs's own.
const { groupMessagesPerPartition } = await dist('sink/kafka/speedUpPartitionGrouping.js').catch((error) => {
  if (error.code !== 'ERR_MODULE_NOT_FOUND') throw error;
  return { groupMessagesPerPartition: kafkajs('./src/producer/groupMessagesPerPartition.js') };
});
const { createKeyPartitioner } = await dist('sink/kafka/createKeyPartitioner.js').catch((error) => {
  if (error.code !== 'ERR_MODULE_NOT_FOUND') throw error;
  return {};
});
// kafkajs encodes as the measured build's relay runs it: with that build's patch, if it has one.
await dist('sink/kafka/speedUpRecordEncoding.js').then(
  (module) => module.speedUpRecordEncoding(),
  (error) => {
    if (error.code !== 'ERR_MODULE_NOT_FOUND') throw error;
  },
);

const databaseUrl = process.env.DATABASE_URL;
if (!databaseUrl) {
  console.error('stageCost: set DATABASE_URL (e.g. eval "$(npm run -s stack -- up)")');
  process.exit(2);
}
const schema = `stage_cost_${process.pid}`;
const publication = `${schema}_pub`;
const db = new pg.Client(databaseUrl);
await db.connect();
const rows = [];
try {
  migrate({ databaseUrl, schema, publication });
  // Temporary: PostgreSQL drops the slot with this session, whatever happens to the script.
  await db.query(`SELECT pg_create_logical_replication_slot($1, 'pgoutput', true)`, [schema]);
  await writeBacklog(db, { schema, events: EVENTS, perTxn: 1, payloadBytes: 0 });
  const written = await currentLsn(db);
  const options = ['proto_version', '1', 'publication_names', publication];
  const sample = await db.query(
    `SELECT data FROM pg_logical_slot_peek_binary_changes($1, NULL, $2, VARIADIC $3::text[])`,
    [schema, SAMPLE_MESSAGES, options],
  );
  const backend = Number((await db.query('SELECT pg_backend_pid() AS pid')).rows[0].pid);
  // Decodes (and consumes) the slot up to `lsn` inside the backend, sending nothing but a count.
  const decodeUpTo = (lsn) =>
    db.query(`SELECT count(*) FROM pg_logical_slot_get_binary_changes($1, $2, NULL, VARIADIC $3::text[])`, [
      schema,
      lsn,
      options,
    ]);
  rows.push(
    await measureDatabase('PostgreSQL: decode the INSERTs (pgoutput)', backend, () => decodeUpTo(written)),
  );

  const pool = new pg.Pool({ connectionString: databaseUrl, max: 1 });
  const store = new PgOutboxStore(pool, { schema, table: 'outbox_events', columns: DEFAULT_COLUMNS });
  const ids = (
    await db.query(`SELECT id::text AS id FROM ${pg.escapeIdentifier(schema)}.outbox_events ORDER BY seq`)
  ).rows;
  const marker = Number((await pool.query('SELECT pg_backend_pid() AS pid')).rows[0].pid);
  // A backlog's rows (committed before the relay took the slot) are checked before they are published.
  const checkStarted = process.cpuUsage();
  rows.push(
    await measureDatabase(
      `PostgreSQL: the already-processed check (${BATCH} ids per SELECT)`,
      marker,
      async () => {
        for (let i = 0; i < ids.length; i += BATCH) {
          const finished = await store.findFinished(ids.slice(i, i + BATCH).map((r) => r.id));
          if (finished.size > 0) throw new Error('stageCost: a fresh backlog row was already processed');
        }
      },
    ),
  );
  const checkClient = [
    'relay: send the check and read its result (pg)',
    micros(process.cpuUsage(checkStarted)) / EVENTS,
  ];
  const markingStarted = process.cpuUsage();
  rows.push(
    await measureDatabase(`PostgreSQL: mark processed (${BATCH} rows per UPDATE)`, marker, async () => {
      for (let i = 0; i < ids.length; i += BATCH) await store.markProcessed(ids.slice(i, i + BATCH));
    }),
  );
  const markingClient = [
    'relay: send the marking and read its result (pg)',
    micros(process.cpuUsage(markingStarted)) / EVENTS,
  ];
  await pool.end();
  const marked = await currentLsn(db);
  rows.push(
    await measureDatabase('PostgreSQL: decode the marking (skipped by pgoutput)', backend, () =>
      decodeUpTo(marked),
    ),
  );

  rows.push(...(await measureRelay(sample.rows.map((r) => r.data))), checkClient, markingClient);
} finally {
  await db.query(`DROP SCHEMA IF EXISTS ${pg.escapeIdentifier(schema)} CASCADE`);
  await db.query(`DROP PUBLICATION IF EXISTS ${pg.escapeIdentifier(publication)}`);
  await db.end();
}
console.log('| stage | µs CPU per event |\n| --- | --- |');
for (const [stage, micros] of rows) console.log(`| ${stage} | ${micros.toFixed(1)} |`);

async function currentLsn(client) {
  return (await client.query('SELECT pg_current_wal_lsn()::text AS lsn')).rows[0].lsn;
}

async function measureDatabase(stage, pid, work) {
  const before = cpuSeconds(pid);
  await work();
  return [stage, ((cpuSeconds(pid) - before) * 1e6) / EVENTS];
}

/** The relay's share, on the sampled messages replayed until EVENTS records went through each stage. */
async function measureRelay(messages) {
  const topics = { template: 'stage.{aggregate_type}' };
  let relation;
  const decode = () => {
    const records = [];
    for (const bytes of messages) {
      const message = decodePgoutput(bytes);
      if (message.tag === 'relation') relation = new OutboxRelation(message, DEFAULT_COLUMNS);
      else if (message.tag === 'insert') records.push(relation.toRecord(message.tuple, 1, Date.now()));
    }
    return records;
  };
  const build = (records) =>
    records.map((record) => {
      const topic = resolveTopic(topics, record);
      if (!topic.ok || record.problem !== undefined || explainBadHeaders(record.headers) !== undefined)
        throw new Error(`stageCost: a sample event would be rejected: ${record.id}`);
      const message = toKafkaMessage(record);
      return { topic: topic.topic, message, bytes: estimateMessageBytes(message) };
    });
  // As kafkajs's producer does before encoding: a partition for each message (by its key), then the messages
  // grouped by partition; over three partitions, as the bench's topics have.
  const partitionMetadata = [0, 1, 2].map((partitionId) => ({ partitionId, leader: 0 }));
  const partitioner = (createKeyPartitioner ?? Partitioners.DefaultPartitioner)();
  const group = (outgoing) => {
    let partitions = 0;
    for (let i = 0; i < outgoing.length; i += BATCH) {
      const messages = outgoing.slice(i, i + BATCH).map((o) => o.message);
      const grouped = groupMessagesPerPartition({
        topic: outgoing[i].topic,
        partitionMetadata,
        messages,
        partitioner,
      });
      partitions += Object.keys(grouped).length;
    }
    return partitions;
  };
  const encode = async (outgoing) => {
    for (let i = 0; i < outgoing.length; i += BATCH) {
      const messages = outgoing.slice(i, i + BATCH).map((o) => o.message);
      const request = produceRequest({
        acks: -1,
        timeout: 30_000,
        topicData: [{ topic: outgoing[i].topic, partitions: [{ partition: 0, messages }] }],
      });
      await request.encode();
    }
  };
  // Per round (one pass over the sample), µs per event of each stage; the median round is reported, so that a
  // burst of other work on the machine moves the figure less than a sum would. The first rounds warm the JIT.
  const rounds = [[], [], [], []];
  for (let round = 0, counted = 0; counted < EVENTS; round++) {
    const t0 = process.cpuUsage();
    const records = decode();
    const t1 = process.cpuUsage();
    const outgoing = build(records);
    const t2 = process.cpuUsage();
    if (group(outgoing) === 0) throw new Error('stageCost: no partition chosen');
    const t3 = process.cpuUsage();
    await encode(outgoing);
    const t4 = process.cpuUsage();
    if (round < 5) continue;
    const times = [t0, t1, t2, t3, t4].map(micros);
    for (let i = 0; i < rounds.length; i++) rounds[i].push((times[i + 1] - times[i]) / records.length);
    counted += records.length;
  }
  return [
    ['relay: decode pgoutput into records', median(rounds[0])],
    ['relay: make Kafka messages (topic, headers, size)', median(rounds[1])],
    [`relay: kafkajs picks partitions and groups the messages (${BATCH} per request)`, median(rounds[2])],
    [`relay: kafkajs encodes produce requests (${BATCH} records)`, median(rounds[3])],
  ];
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

function micros(usage) {
  return usage.user + usage.system;
}
