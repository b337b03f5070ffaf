#!/usr/bin/env node
// Smoke test of the Debezium baseline (scripts/bench/debezium.mjs), end to end on a private stack: migrate,
// create the topic, start Kafka Connect + Debezium, insert rows into the outbox, consume them all from Kafka
// and check key, value and headers. Prints the timings.
// Usage: node scripts/bench/debeziumSmoke.mjs [--tuned] [events=1000]
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

import kafkajs from 'kafkajs';
import pg from 'pg';

import { ROOT, startStack, stopStack } from '../stack/stack.mjs';
import { CLI, createTopic, log, runCli } from './benchSupport.mjs';
import { startDebezium } from './debezium.mjs';

const { Kafka, logLevel } = kafkajs;
const tuned = process.argv.includes('--tuned');
const EVENTS = Number(process.argv.slice(2).find((a) => /^\d+$/.test(a)) ?? 1000);
const STATE_DIR = join(ROOT, '.stack', 'debezium-smoke');
const TOPIC = 'outbox.order';

if (!existsSync(CLI)) {
  log('dist/ missing: npm run build');
  if (spawnSync('npm', ['run', 'build'], { cwd: ROOT, stdio: 'inherit' }).status !== 0) process.exit(1);
}

const seconds = (t0) => ((Date.now() - t0) / 1000).toFixed(2);
const state = await startStack({ stateDir: STATE_DIR, log });
const url = state.postgres.url;
const brokers = state.kafka.brokers;
const db = new pg.Client({ connectionString: url });
const consumer = new Kafka({
  clientId: 'debezium-smoke',
  brokers: [brokers],
  logLevel: logLevel.NOTHING,
}).consumer({ groupId: 'debezium-smoke' });
let debezium;
let failed = false;
try {
  await db.connect();
  runCli(['migrate', '--database-url', url]);
  // the broker never auto-creates topics; LogAppendTime stamps each record with its arrival at the broker
  await createTopic(brokers, TOPIC, [{ name: 'message.timestamp.type', value: 'LogAppendTime' }]);

  const received = new Map(); // payload n -> message
  const problems = [];
  await consumer.connect();
  await consumer.subscribe({ topic: TOPIC, fromBeginning: true });
  await consumer.run({
    eachMessage: async ({ partition, message }) => {
      const key = message.key?.toString();
      const value = message.value?.toString() ?? '';
      let n;
      try {
        n = JSON.parse(value).n;
      } catch {
        problems.push(`value is not the JSON payload: ${value}`);
        return;
      }
      const headers = Object.fromEntries(
        Object.entries(message.headers ?? {}).map(([k, v]) => [k, String(v)]),
      );
      if (key !== `agg-${n % 50}`) problems.push(`n=${n}: key ${key}, want agg-${n % 50}`);
      if (headers.event_type !== 'test') problems.push(`n=${n}: event_type header ${headers.event_type}`);
      if (!headers.id) problems.push(`n=${n}: no id header`);
      received.set(n, { partition, key, value, headers, timestamp: message.timestamp });
    },
  });

  const t0 = Date.now();
  debezium = await startDebezium({
    root: ROOT,
    runDir: join(STATE_DIR, 'debezium'),
    brokers,
    databaseUrl: url,
    slot: 'debezium',
    publication: 'walbox',
    schema: 'public',
    table: 'outbox_events',
    topicPrefix: 'outbox',
    tuned,
    log,
  });
  log(`Debezium (${tuned ? 'tuned' : 'defaults'}) ready in ${seconds(t0)} s`);

  const t1 = Date.now();
  await db.query(
    `INSERT INTO public.outbox_events (aggregate_type, aggregate_id, event_type, payload)
     SELECT 'order', 'agg-' || (n % 50), 'test', jsonb_build_object('n', n) FROM generate_series(1, $1) AS n`,
    [EVENTS],
  );
  const inserted = seconds(t1);
  const deadline = Date.now() + 120_000;
  while (received.size < EVENTS && problems.length === 0 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 20));
  }
  const total = seconds(t1);
  // LogAppendTime: when the broker appended the first and the last record, i.e. Debezium's share of the total
  const appended = [...received.values()].map((m) => Number(m.timestamp) - t1);
  if (problems.length > 0) throw new Error(`bad messages:\n${problems.slice(0, 10).join('\n')}`);
  if (received.size < EVENTS) throw new Error(`only ${received.size}/${EVENTS} messages arrived in 120 s`);
  console.log(JSON.stringify({ example: received.get(1) }, null, 2));
  console.log(
    JSON.stringify({
      config: tuned ? 'tuned' : 'defaults',
      events: EVENTS,
      insertSeconds: Number(inserted),
      firstAppendedSeconds: Math.min(...appended) / 1000,
      lastAppendedSeconds: Math.max(...appended) / 1000,
      insertToLastConsumedSeconds: Number(total),
      eventsPerSecond: Math.round(EVENTS / Number(total)),
    }),
  );
} catch (error) {
  failed = true;
  console.error(error);
} finally {
  await consumer.disconnect().catch(() => undefined);
  if (debezium !== undefined) {
    await debezium.stop();
    const slots = await db.query(`SELECT slot_name FROM pg_replication_slots`).catch(() => ({ rows: [] }));
    log(`Connect stopped; slots left: [${slots.rows.map((r) => r.slot_name).join(', ')}]`);
    // the worker logs at WARN: show what it complained about before stopStack removes the log
    const lines = readFileSync(debezium.logFile, 'utf8').split('\n');
    const noisy = lines.filter((l) => /\] (WARN|ERROR) /.test(l));
    log(`${debezium.logFile}: ${noisy.length} WARN/ERROR lines${noisy.length ? ':' : ''}`);
    for (const l of noisy.slice(0, 20)) log(`  ${l.slice(0, 300)}`);
  }
  await db.end().catch(() => undefined);
  await stopStack({ stateDir: STATE_DIR, log });
}
process.exit(failed ? 1 : 0);
