#!/usr/bin/env node
// Benchmark: drain a backlog of single-event transactions written after the slot exists, in WAL mode, next to
// pg_recvlogical decoding the same backlog (the decoding ceiling). Starts its own stack; prints JSON.
// Usage: npm run build && node scripts/bench/walDrain.mjs [events=100000]
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import pg from 'pg';

import { ROOT, startStack, stopStack } from '../stack/stack.mjs';

const EVENTS = Number(process.argv[2] ?? 100_000);
const STATE_DIR = join(ROOT, '.stack', `bench-${process.pid}`);
const CLI = join(ROOT, 'dist', 'cli', 'main.js');
const log = (m) => console.error(`bench: ${m}`);

const state = await startStack({ stateDir: STATE_DIR, log });
const url = state.postgres.url;
const brokers = state.kafka.brokers;
const db = new pg.Client({ connectionString: url });
try {
  await db.connect();
  run(['migrate', '--database-url', url]);
  await createTopic(brokers, 'outbox.order');
  // Both slots exist before the backlog is written: walbox's (created and caught up by a first short run) and
  // the baseline's.
  const first = startRelay(url, brokers);
  await waitFor(async () => (await slotActive(db, 'walbox')) === true);
  first.kill('SIGTERM');
  await new Promise((resolve) => first.on('exit', resolve));
  await db.query(`SELECT pg_create_logical_replication_slot('bench_recvlogical', 'pgoutput')`);

  log(`writing ${EVENTS} single-event transactions`);
  await db.query(`CREATE OR REPLACE PROCEDURE bench_write(n int) LANGUAGE plpgsql AS $$
    BEGIN
      FOR i IN 1..n LOOP
        INSERT INTO outbox_events (aggregate_type, aggregate_id, event_type, payload)
        VALUES ('order', 'agg-' || (i % 1000), 'bench', jsonb_build_object('i', i, 'note', 'a small event'));
        COMMIT;
      END LOOP;
    END $$`);
  const writeStarted = Date.now();
  await db.query('CALL bench_write($1)', [EVENTS]);
  const writeSeconds = (Date.now() - writeStarted) / 1000;
  const endLsn = (await db.query('SELECT pg_current_wal_lsn()::text AS lsn')).rows[0].lsn;

  log('pg_recvlogical: decoding the backlog');
  const pgBin = state.postgres.bin;
  const recvStarted = Date.now();
  const recv = spawnSync(
    join(pgBin, 'pg_recvlogical'),
    [
      '-d',
      url,
      '-S',
      'bench_recvlogical',
      '--start',
      '-E',
      endLsn,
      '-f',
      '/dev/null',
      '--no-loop',
      '-o',
      'proto_version=1',
      '-o',
      'publication_names=walbox',
    ],
    { encoding: 'utf8' },
  );
  const recvSeconds = (Date.now() - recvStarted) / 1000;
  if (recv.status !== 0) throw new Error(`pg_recvlogical failed: ${recv.stderr}`);

  log('walbox: draining the backlog');
  const relayStarted = Date.now();
  const relay = startRelay(url, brokers);
  let peakRssKb = 0;
  await waitFor(async () => {
    peakRssKb = Math.max(peakRssKb, readRss(relay.pid));
    const { rows } = await db.query(
      `SELECT confirmed_flush_lsn >= $1::pg_lsn AS done FROM pg_replication_slots WHERE slot_name = 'walbox'`,
      [endLsn],
    );
    return rows[0]?.done === true;
  }, 600_000);
  const relaySeconds = (Date.now() - relayStarted) / 1000;
  const pending = Number(
    (await db.query('SELECT count(*) AS n FROM outbox_events WHERE processed_at IS NULL')).rows[0].n,
  );
  relay.kill('SIGTERM');
  await new Promise((resolve) => relay.on('exit', resolve));
  const result = {
    events: EVENTS,
    writeSeconds,
    pgRecvlogical: { seconds: recvSeconds, eventsPerSecond: Math.round(EVENTS / recvSeconds) },
    walbox: {
      seconds: relaySeconds,
      eventsPerSecond: Math.round(EVENTS / relaySeconds),
      peakRssMiB: Math.round(peakRssKb / 1024),
      pendingAfter: pending,
    },
    ratioToDecodingCeiling: Number((recvSeconds / relaySeconds).toFixed(2)),
  };
  console.log(JSON.stringify(result, null, 2));
} finally {
  await db.end().catch(() => undefined);
  await stopStack({ stateDir: STATE_DIR, log });
}

function run(args) {
  const r = spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`walbox ${args[0]} failed: ${r.stderr}`);
}

function startRelay(databaseUrl, kafkaBrokers) {
  // BENCH_CPU_PROF=dir writes a V8 CPU profile of the relay there; BENCH_RELAY_ARGS adds flags (e.g. --batch-size).
  const profile = process.env.BENCH_CPU_PROF
    ? ['--cpu-prof', '--cpu-prof-dir', process.env.BENCH_CPU_PROF]
    : [];
  const extra = (process.env.BENCH_RELAY_ARGS ?? '').split(' ').filter(Boolean);
  return spawn(
    process.execPath,
    [
      ...profile,
      CLI,
      'run',
      ...extra,
      '--database-url',
      databaseUrl,
      '--kafka-brokers',
      kafkaBrokers,
      '--metrics-port',
      '0',
      '--log-level',
      'warn',
    ],
    {
      stdio: ['ignore', 'ignore', 'inherit'],
    },
  );
}

function readRss(pid) {
  try {
    return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
  } catch {
    return 0;
  }
}

async function slotActive(client, slot) {
  const { rows } = await client.query('SELECT active FROM pg_replication_slots WHERE slot_name = $1', [slot]);
  return rows[0]?.active;
}

async function createTopic(kafkaBrokers, topic) {
  const { Kafka, logLevel } = (await import('kafkajs')).default;
  const admin = new Kafka({ brokers: [kafkaBrokers], logLevel: logLevel.NOTHING }).admin();
  await admin.connect();
  await admin.createTopics({
    topics: [{ topic, numPartitions: 3, replicationFactor: 1 }],
    waitForLeaders: true,
  });
  await admin.disconnect();
}

async function waitFor(condition, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('bench: timed out');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
