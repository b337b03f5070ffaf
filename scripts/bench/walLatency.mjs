#!/usr/bin/env node
// Benchmark: delivery latency at a steady rate, in WAL mode: broker append time (LogAppendTime) minus commit
// time (pg_xact_commit_timestamp, track_commit_timestamp=on). Starts its own stack; prints JSON.
// Usage: npm run build && node scripts/bench/walLatency.mjs [eventsPerSecond=1000] [seconds=20]
import { spawn, spawnSync } from 'node:child_process';
import { join } from 'node:path';

import kafkajs from 'kafkajs';
import pg from 'pg';

import { ROOT, startStack, stopStack } from '../stack/stack.mjs';
import { readRssKb, waitFor } from './benchSupport.mjs';

const RATE = Number(process.argv[2] ?? 1000);
const SECONDS = Number(process.argv[3] ?? 20);
const STATE_DIR = join(ROOT, '.stack', `bench-${process.pid}`);
const CLI = join(ROOT, 'dist', 'cli', 'main.js');
const TOPIC = 'outbox.order';
const log = (m) => console.error(`bench: ${m}`);

const state = await startStack({ stateDir: STATE_DIR, log });
const url = state.postgres.url;
const kafka = new kafkajs.Kafka({ brokers: [state.kafka.brokers], logLevel: kafkajs.logLevel.NOTHING });
const db = new pg.Client({ connectionString: url });
let relay;
try {
  await db.connect();
  const migrated = spawnSync(process.execPath, [CLI, 'migrate', '--database-url', url], { encoding: 'utf8' });
  if (migrated.status !== 0) throw new Error(migrated.stderr);
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({
    waitForLeaders: true,
    topics: [
      {
        topic: TOPIC,
        numPartitions: 3,
        replicationFactor: 1,
        configEntries: [{ name: 'message.timestamp.type', value: 'LogAppendTime' }],
      },
    ],
  });
  await admin.disconnect();
  relay = spawn(
    process.execPath,
    [
      CLI,
      'run',
      '--database-url',
      url,
      '--kafka-brokers',
      state.kafka.brokers,
      '--metrics-port',
      '0',
      '--log-level',
      'warn',
    ],
    {
      stdio: ['ignore', 'ignore', 'inherit'],
    },
  );
  await waitFor(
    async () =>
      (await db.query(`SELECT active FROM pg_replication_slots WHERE slot_name = 'walbox'`)).rows[0]
        ?.active === true,
  );

  const appended = new Map();
  const consumer = kafka.consumer({ groupId: `bench-${process.pid}`, maxWaitTimeInMs: 50 });
  await consumer.connect();
  await consumer.subscribe({ topic: TOPIC, fromBeginning: true });
  await consumer.run({
    eachMessage: async ({ message }) =>
      void appended.set(message.headers.id.toString(), Number(message.timestamp)),
  });

  log(`writing ${RATE} events/s for ${SECONDS} s`);
  const total = RATE * SECONDS;
  const writes = [];
  const started = Date.now();
  let peakRssKb = 0;
  for (let i = 0; i < total; i++) {
    const due = started + (i * 1000) / RATE;
    const wait = due - Date.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    // The row's xmin changes when walbox marks it processed: keep the inserting transaction's id.
    const { rows: inserted } = await db.query(
      `INSERT INTO outbox_events (aggregate_type, aggregate_id, event_type, payload) VALUES ('order', $1, 'bench', $2)
       RETURNING id::text AS id, xmin::text AS xid`,
      [`agg-${i % 1000}`, JSON.stringify({ i })],
    );
    writes.push(inserted[0]);
    if (i % RATE === 0) peakRssKb = Math.max(peakRssKb, readRssKb(relay.pid));
  }
  await waitFor(() => appended.size >= total, 120_000);
  await consumer.disconnect();
  const { rows } = await db.query(
    `SELECT w.id, (extract(epoch FROM pg_xact_commit_timestamp(w.xid::xid)) * 1000)::float8 AS committed_ms
       FROM unnest($1::text[], $2::text[]) AS w(id, xid)`,
    [writes.map((w) => w.id), writes.map((w) => w.xid)],
  );
  const latencies = rows.map((r) => appended.get(r.id) - r.committed_ms).sort((a, b) => a - b);
  const pick = (q) =>
    Math.round(latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] * 10) / 10;
  console.log(
    JSON.stringify(
      {
        rate: RATE,
        seconds: SECONDS,
        events: latencies.length,
        latencyMs: { p50: pick(0.5), p99: pick(0.99), max: pick(1) },
        relayPeakRssMiB: Math.round(peakRssKb / 1024),
      },
      null,
      2,
    ),
  );
} finally {
  relay?.kill('SIGTERM');
  await db.end().catch(() => undefined);
  await stopStack({ stateDir: STATE_DIR, log });
}
