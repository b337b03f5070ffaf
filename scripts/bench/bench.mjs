#!/usr/bin/env node
// npm run bench [-- --quick] [-- --without-debezium] [-- --only=drain1,rate1k]: walbox (WAL and poll mode) side by side with its ceilings
// (pg_recvlogical, Kafka's ProducerPerformance) and Debezium, on a private stack started for the run.
// Writes bench/results/<date>.json and .md, an SVG chart, and docs/performance.md. Reports figures; asserts none.
// First: kafkajs's producer must load after walbox's partition grouping and produce request are in place (see below).
import '../../dist/sink/kafka/kafkajs.js';
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';

import kafkajs from 'kafkajs';
import pg from 'pg';

import { speedUpRecordEncoding } from '../../dist/sink/kafka/speedUpRecordEncoding.js';
import { stopRequestQueueSpin } from '../../dist/sink/kafka/stopRequestQueueSpin.js';
import { ROOT, startStack, stopStack } from '../stack/stack.mjs';
import { decodeWithRecvlogical, measureKafkajs, measurePlatformatic, measureProducer } from './ceilings.mjs';
import {
  cpuSeconds,
  percentiles,
  readAppends,
  startAppendRecorder,
  startDbMeter,
  startMachineMeter,
  startOffsetWatcher,
  startSampler,
  waitUntil,
} from './measure.mjs';
import { writeReports } from './report.mjs';
import { debeziumSystem, migrate, walboxSystem } from './systems.mjs';
import { readCommitTimes, writeAtRate, writeBacklog } from './workloads.mjs';

// The bench's own kafkajs clients (the offset watcher, the rate runs' consumer, the kafkajs-alone ceiling) run
// kafkajs as walbox does: without its idle timer that wakes every connection once a millisecond, with its
// record encoding sped up, its produce requests made walbox's way and its grouping by partition in linear time
// (docs/development.md, "Decisions").
stopRequestQueueSpin();
speedUpRecordEncoding();

const QUICK = process.argv.includes('--quick');
const WITH_DEBEZIUM = !process.argv.includes('--without-debezium');
const log = (m) => console.error(`bench ${new Date().toISOString().slice(11, 19)}: ${m}`);

const WORKLOADS = QUICK
  ? [
      {
        id: 'drain1',
        title: 'drain 20k events, 1 per transaction',
        kind: 'drain',
        events: 20_000,
        perTxn: 1,
      },
      {
        id: 'drain8k',
        title: 'drain 2k events of 8 KB',
        kind: 'drain',
        events: 2_000,
        perTxn: 1,
        payloadBytes: 8192,
      },
      { id: 'rate1k', title: '1k events/s for 15 s', kind: 'rate', rate: 1000, seconds: 15, repeats: 2 },
      { id: 'idle', title: 'idle: 10 events/s for 10 s', kind: 'rate', rate: 10, seconds: 10 },
    ]
  : [
      {
        id: 'drain1',
        title: 'drain 100k events, 1 per transaction',
        kind: 'drain',
        events: 100_000,
        perTxn: 1,
      },
      {
        id: 'drain100',
        title: 'drain 100k events, 100 per transaction',
        kind: 'drain',
        events: 100_000,
        perTxn: 100,
      },
      {
        id: 'drain8k',
        title: 'drain 10k events of 8 KB',
        kind: 'drain',
        events: 10_000,
        perTxn: 1,
        payloadBytes: 8192,
      },
      { id: 'rate1k', title: '1k events/s for 60 s', kind: 'rate', rate: 1000, seconds: 60, repeats: 3 },
      { id: 'idle', title: 'idle: 10 events/s for 30 s', kind: 'rate', rate: 10, seconds: 30 },
    ];

// --only=<id>[,<id>] runs some workloads (e.g. for a CPU profile of one drain).
const only = process.argv
  .find((a) => a.startsWith('--only='))
  ?.slice('--only='.length)
  .split(',');
if (only !== undefined)
  WORKLOADS.splice(0, WORKLOADS.length, ...WORKLOADS.filter((w) => only.includes(w.id)));

const SYSTEMS = {
  wal: walboxSystem('wal'),
  poll: walboxSystem('poll'),
  dbz: debeziumSystem(false),
  dbzTuned: debeziumSystem(true),
};
// Quick runs take Debezium with its defaults only (each start costs a JVM boot).
const DEBEZIUM_KEYS = WITH_DEBEZIUM ? (QUICK ? ['dbz'] : ['dbz', 'dbzTuned']) : [];
const DRAIN_TIMEOUT_MS = 20 * 60_000;
/** Reading a drained topic back (100k records) takes seconds; a stuck read ends the run as incomplete. */
const READ_TIMEOUT_MS = 5 * 60_000;
/** Seconds written at the workload's rate before a rate run is measured. */
const WARMUP_SECONDS = 2;

const stateDir = join(ROOT, '.stack', `bench-${process.pid}`);
const runRoot = join(ROOT, '.stack', `bench-${process.pid}-runs`);
mkdirSync(runRoot, { recursive: true });
const state = await startStack({ stateDir, log });
const databaseUrl = state.postgres.url;
const brokers = state.kafka.brokers;
const db = new pg.Client({ connectionString: databaseUrl });
const kafka = new kafkajs.Kafka({ brokers: [brokers], logLevel: kafkajs.logLevel.NOTHING });
const admin = kafka.admin();
const results = [];
let failure;
try {
  await db.connect();
  await admin.connect();
  if (WITH_DEBEZIUM) {
    const { fetchConnect } = await import('./debezium.mjs');
    await fetchConnect({ root: ROOT, log });
  }
  for (const workload of WORKLOADS) {
    log(`workload ${workload.title}`);
    results.push(workload.kind === 'drain' ? await runDrain(workload) : await runRate(workload));
  }
} catch (error) {
  failure = error;
  log(`failed: ${error.stack ?? error}`);
} finally {
  await admin.disconnect().catch(() => undefined);
  await db.end().catch(() => undefined);
  await stopStack({ stateDir, log });
  rmSync(runRoot, { recursive: true, force: true });
}
if (results.length > 0) {
  const partial = only !== undefined || !WITH_DEBEZIUM || failure !== undefined;
  const files = writeReports({ root: ROOT, quick: QUICK, partial, workloads: results, state });
  log(`wrote ${files.join(', ')}`);
}
process.exit(failure === undefined ? 0 : 1);

/** One topic per (workload, system), with LogAppendTime: the broker's clock stamps each append. */
async function createTopic(topic) {
  await admin.createTopics({
    waitForLeaders: true,
    topics: [
      {
        topic,
        numPartitions: 3,
        replicationFactor: 1,
        configEntries: [{ name: 'message.timestamp.type', value: 'LogAppendTime' }],
      },
    ],
  });
}

function context(workload, key, schema, publication) {
  const topicPrefix = `b_${workload.id}_${key}`.toLowerCase();
  return {
    db,
    databaseUrl,
    brokers,
    schema,
    publication,
    slot: `${workload.id}_${key}`.toLowerCase(),
    topicPrefix,
    topic: `${topicPrefix}.order`,
    runDir: join(runRoot, `${workload.id}_${key}`),
    log,
  };
}

/**
 * Starts a system, waits until its topic holds as many records as events were written, and measures it; reads
 * the records only then, to count distinct events and take their append times.
 */
async function measureRun(system, ctx, expected, { startedAt } = {}) {
  const watcher = await startOffsetWatcher(brokers, ctx.topic);
  const started = Date.now();
  const dbMeter = await startDbMeter(db);
  const machineMeter = startMachineMeter({ brokerPidFile: join(state.kafka.runDir, 'broker.pid') });
  let handle;
  try {
    handle = await system.start(ctx);
    const sampler = startSampler({ pid: handle.pid, db, slot: system.usesSlot ? ctx.slot : undefined });
    const deadline = Date.now() + DRAIN_TIMEOUT_MS;
    let reached = await waitUntil(async () => (await watcher.records()) >= expected, DRAIN_TIMEOUT_MS, 200);
    const cpuNow = cpuSeconds(handle.pid);
    const dbCost = await dbMeter.stop();
    const machine = machineMeter.stop();
    const peaks = await sampler.stop();
    // A system that exited already has no /proc entry: its last sampled reading stands in.
    const cpu = cpuNow || peaks.cpuSeconds;
    let total = await watcher.records();
    let read = await readAppends(brokers, ctx.topic, total, READ_TIMEOUT_MS);
    // Duplicates can fill the count before the last events arrive: wait for as many more records as are missing
    // (not after a read that stalled: the run is then incomplete).
    while (reached && read.messages >= total && read.appended.size < expected) {
      const wanted = total + expected - read.appended.size;
      reached = await waitUntil(async () => (await watcher.records()) >= wanted, deadline - Date.now(), 200);
      total = await watcher.records();
      read = await readAppends(brokers, ctx.topic, total, READ_TIMEOUT_MS);
    }
    const times = [...read.appended.values()];
    const first = Math.min(...times);
    const last = Math.max(...times);
    return {
      system: system.name,
      expected,
      delivered: read.appended.size,
      messages: read.messages,
      complete: read.appended.size >= expected,
      // Steady drain rate: first to last append, so JVM and process start-up are not counted.
      eventsPerSecond: times.length > 1 ? Math.round((times.length - 1) / ((last - first) / 1000)) : null,
      secondsFromStart: Math.round((last - (startedAt ?? started)) / 100) / 10,
      cpuSeconds: Math.round(cpu * 10) / 10,
      peakRssMiB: Math.round(peaks.rssBytes / 1024 / 1024),
      peakSlotLagMiB: system.usesSlot ? Math.round((peaks.slotLagBytes / 1024 / 1024) * 10) / 10 : null,
      // Per delivered event, from the system's start to the last append (start-up included).
      perEvent: perEventCost(cpu, dbCost, machine, expected),
    };
  } finally {
    await handle?.stop();
    await watcher.stop();
  }
}

function perEventCost(relayCpuSeconds, dbCost, machine, events) {
  const micros = (seconds) => Math.round((seconds * 1e6) / events);
  return {
    relayCpuMicros: micros(relayCpuSeconds),
    postgresCpuMicros: micros(dbCost.cpuSeconds),
    brokerCpuMicros: micros(machine.brokerSeconds),
    benchCpuMicros: micros(machine.benchSeconds),
    machineBusyMicros: micros(machine.busySeconds),
    walBytes: Math.round(dbCost.walBytes / events),
  };
}

async function runDrain(workload) {
  const runs = [];
  const ceilings = {};
  // The WAL readers share one schema and one backlog; each has its own slot, created before the backlog.
  const schema = `b_${workload.id}`;
  const publication = `p_${workload.id}`;
  migrate({ databaseUrl, schema, publication });
  const walKeys = ['wal', ...DEBEZIUM_KEYS];
  for (const key of walKeys) {
    const ctx = context(workload, key, schema, publication);
    await createTopic(ctx.topic);
    const handle = await SYSTEMS[key].start(ctx);
    await handle.stop();
  }
  const recvSlot = `${workload.id}_recv`;
  await db.query(`SELECT pg_create_logical_replication_slot($1, 'pgoutput')`, [recvSlot]);
  log(`writing ${workload.events} events (${workload.perTxn} per transaction)`);
  const writeSeconds = await writeBacklog(db, {
    schema,
    ...workload,
    payloadBytes: workload.payloadBytes ?? 0,
  });
  const { rows } = await db.query('SELECT pg_current_wal_lsn()::text AS lsn');
  const endLsn = rows[0].lsn;

  log('pg_recvlogical: decoding the backlog');
  const recvSeconds = decodeWithRecvlogical({
    bin: state.postgres.bin,
    databaseUrl,
    slot: recvSlot,
    publication,
    endLsn,
  });
  await db.query('SELECT pg_drop_replication_slot($1)', [recvSlot]);
  ceilings.pgRecvlogical = Math.round(workload.events / recvSeconds);

  // Debezium first, walbox last: walbox marks rows processed, which adds WAL the later readers would decode.
  for (const key of [...DEBEZIUM_KEYS, 'wal']) {
    log(`${SYSTEMS[key].name}: draining`);
    const ctx = context(workload, key, schema, publication);
    runs.push(await measureRun(SYSTEMS[key], ctx, workload.events).catch((error) => failed(key, error)));
    await db.query('SELECT pg_drop_replication_slot($1)', [ctx.slot]).catch(() => undefined);
  }

  log('walbox poll: draining its own backlog');
  const pollSchema = `b_${workload.id}_poll`;
  const pollCtx = context(workload, 'poll', pollSchema, `p_${workload.id}_poll`);
  migrate({ databaseUrl, schema: pollSchema, publication: pollCtx.publication });
  await createTopic(pollCtx.topic);
  await writeBacklog(db, { schema: pollSchema, ...workload, payloadBytes: workload.payloadBytes ?? 0 });
  runs.push(await measureRun(SYSTEMS.poll, pollCtx, workload.events).catch((error) => failed('poll', error)));

  log('ProducerPerformance: the client ceiling');
  const producerTopic = `b_${workload.id}_producer`;
  await createTopic(producerTopic);
  ceilings.producerPerformance = Math.round(
    measureProducer({
      root: ROOT,
      brokers,
      topic: producerTopic,
      records: workload.events,
      recordSize: (workload.payloadBytes ?? 0) > 0 ? workload.payloadBytes : 200,
    }),
  );
  // The two clients alone, alternately, twice each (best run kept): kafkajs is walbox's; the other one tells
  // what a client switch would buy on this machine.
  log('kafkajs and @platformatic/kafka alone: the ceilings of the client libraries');
  const clients = { kafkajs: [], platformatic: [] };
  for (let round = 1; round <= 2; round++) {
    for (const [name, measure] of [
      ['kafkajs', measureKafkajs],
      ['platformatic', measurePlatformatic],
    ]) {
      const topic = `b_${workload.id}_${name}_${round}`;
      await createTopic(topic);
      clients[name].push(
        await measure({
          brokers,
          topic,
          records: workload.events,
          recordSize: (workload.payloadBytes ?? 0) > 0 ? workload.payloadBytes : 60,
        }),
      );
    }
  }
  const best = (list) => list.reduce((a, b) => (b.recordsPerSecond > a.recordsPerSecond ? b : a));
  ceilings.kafkajs = best(clients.kafkajs).recordsPerSecond;
  ceilings.platformatic = best(clients.platformatic).recordsPerSecond;
  await dropSchemas([schema, pollSchema]);
  return { ...workload, writeSeconds, ceilings, clients, runs };
}

async function runRate(workload) {
  const runs = [];
  // walbox's runs are repeated (a latency percentile of one run is one sample); Debezium's JVM runs once.
  const plan = ['wal', 'poll', ...DEBEZIUM_KEYS].flatMap((key) =>
    Array.from({ length: key === 'wal' || key === 'poll' ? (workload.repeats ?? 1) : 1 }, (_, i) => ({
      key,
      repeat: i + 1,
    })),
  );
  for (const { key, repeat } of plan) {
    const system = SYSTEMS[key];
    log(`${system.name}: ${workload.rate} events/s for ${workload.seconds} s (run ${repeat})`);
    const schema = `b_${workload.id}_${key}_${repeat}`.toLowerCase();
    const ctx = context({ ...workload, id: `${workload.id}_${repeat}` }, key, schema, `p_${schema}`);
    migrate({ databaseUrl, schema, publication: ctx.publication, notifyTrigger: key === 'poll' });
    await createTopic(ctx.topic);
    const run = await measureRate(system, ctx, workload).catch((error) => failed(key, error));
    runs.push({ ...run, repeat });
    if (system.usesSlot)
      await db.query('SELECT pg_drop_replication_slot($1)', [ctx.slot]).catch(() => undefined);
    await dropSchemas([schema]);
  }
  return { ...workload, ceilings: {}, runs };
}

async function measureRate(system, ctx, workload) {
  const recorder = await startAppendRecorder(brokers, ctx.topic);
  // Four connections keep 1k events/s on 2 busy cores; at most one per 50 events/s.
  const writers = Array.from(
    { length: Math.max(1, Math.min(4, Math.round(workload.rate / 50))) },
    () => new pg.Client({ connectionString: databaseUrl }),
  );
  for (const writer of writers) await writer.connect();
  let handle;
  try {
    handle = await system.start(ctx);
    // Warm-up, not measured: the first sends of a fresh process (metadata, connections, JIT) are not its latency.
    const warmup = await writeAtRate(writers, {
      schema: ctx.schema,
      rate: workload.rate,
      seconds: WARMUP_SECONDS,
    });
    await waitUntil(() => warmup.writes.every((w) => recorder.appended.has(w.id)), 60_000, 100);
    const cpuBefore = cpuSeconds(handle.pid);
    const dbMeter = await startDbMeter(db);
    const machineMeter = startMachineMeter({ brokerPidFile: join(state.kafka.runDir, 'broker.pid') });
    const sampler = startSampler({ pid: handle.pid, db, slot: system.usesSlot ? ctx.slot : undefined });
    const { writes, achievedRate } = await writeAtRate(writers, { schema: ctx.schema, ...workload });
    const complete = await waitUntil(() => writes.every((w) => recorder.appended.has(w.id)), 120_000, 200);
    const cpu = cpuSeconds(handle.pid) - cpuBefore;
    const dbCost = await dbMeter.stop();
    const machine = machineMeter.stop();
    const peaks = await sampler.stop();
    const committed = await readCommitTimes(db, writes);
    const latencies = writes
      .filter((w) => recorder.appended.has(w.id) && committed.has(w.id))
      .map((w) => recorder.appended.get(w.id) - committed.get(w.id));
    return {
      system: system.name,
      expected: writes.length,
      delivered: writes.filter((w) => recorder.appended.has(w.id)).length,
      messages: recorder.messages(),
      complete,
      eventsPerSecond: Math.round(achievedRate),
      latencyMs: percentiles(latencies),
      cpuSeconds: Math.round(cpu * 10) / 10,
      peakRssMiB: Math.round(peaks.rssBytes / 1024 / 1024),
      peakSlotLagMiB: system.usesSlot ? Math.round((peaks.slotLagBytes / 1024 / 1024) * 10) / 10 : null,
      // Per written event, over the measured window; PostgreSQL's share includes the writers' inserts.
      perEvent: perEventCost(cpu, dbCost, machine, writes.length),
    };
  } finally {
    await handle?.stop();
    for (const writer of writers) await writer.end();
    await recorder.stop();
  }
}

function failed(key, error) {
  log(`${SYSTEMS[key].name} failed: ${error.message}`);
  return { system: SYSTEMS[key].name, complete: false, error: error.message };
}

async function dropSchemas(schemas) {
  for (const schema of schemas)
    await db.query(`DROP SCHEMA IF EXISTS ${pg.escapeIdentifier(schema)} CASCADE`);
}
