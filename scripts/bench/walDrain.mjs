#!/usr/bin/env node
// Benchmark: drain a backlog of single-event transactions, in WAL mode (written after the slot exists) next to
// pg_recvlogical decoding the same backlog (the decoding ceiling), then in poll mode; with PostgreSQL's CPU per
// event in each mode. Starts its own stack; prints JSON.
// Usage: npm run build && node scripts/bench/walDrain.mjs [events=100000]
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

import pg from 'pg';

import { ROOT, startStack, stopStack } from '../stack/stack.mjs';
import {
  createTopic,
  log,
  postgresCpuMs,
  readRssKb,
  runCli,
  startRelay,
  stopRelay,
  waitFor,
  writeBacklog,
} from './benchSupport.mjs';

const EVENTS = Number(process.argv[2] ?? 100_000);
const STATE_DIR = join(ROOT, '.stack', `bench-${process.pid}`);

const state = await startStack({ stateDir: STATE_DIR, log });
const url = state.postgres.url;
const brokers = state.kafka.brokers;
const dataDir = state.postgres.dataDir;
const db = new pg.Client({ connectionString: url });
try {
  await db.connect();
  runCli(['migrate', '--database-url', url]);
  await createTopic(brokers, 'outbox.order');
  // Both slots exist before the backlog is written: walbox's (created by a first short run) and the baseline's.
  const first = startRelay(url, brokers);
  await waitFor(
    async () =>
      (await db.query(`SELECT active FROM pg_replication_slots WHERE slot_name = 'walbox'`)).rows[0]
        ?.active === true,
  );
  await stopRelay(first);
  await db.query(`SELECT pg_create_logical_replication_slot('bench_recvlogical', 'pgoutput')`);

  log(`writing ${EVENTS} single-event transactions`);
  const writeStarted = Date.now();
  await writeBacklog(db, EVENTS);
  const writeSeconds = (Date.now() - writeStarted) / 1000;
  const endLsn = (await db.query('SELECT pg_current_wal_lsn()::text AS lsn')).rows[0].lsn;

  log('pg_recvlogical: decoding the backlog');
  const recvStarted = Date.now();
  const recv = spawnSync(
    join(state.postgres.bin, 'pg_recvlogical'),
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
  await db.query(`SELECT pg_drop_replication_slot('bench_recvlogical')`);

  log('walbox WAL mode: draining the backlog');
  const wal = await measureDrain(async () => {
    const { rows } = await db.query(
      `SELECT confirmed_flush_lsn >= $1::pg_lsn AS done FROM pg_replication_slots WHERE slot_name = 'walbox'`,
      [endLsn],
    );
    return rows[0]?.done === true;
  });

  log(`writing another ${EVENTS} events for poll mode`);
  await db.query(`SELECT pg_drop_replication_slot('walbox')`);
  await writeBacklog(db, EVENTS);
  log('walbox poll mode: draining the backlog');
  const poll = await measureDrain(
    async () =>
      Number(
        (await db.query('SELECT count(*) AS n FROM outbox_events WHERE processed_at IS NULL')).rows[0].n,
      ) === 0,
    ['--mode', 'poll', '--poll-interval', '100ms'],
  );

  console.log(
    JSON.stringify(
      {
        events: EVENTS,
        writeSeconds,
        pgRecvlogical: { seconds: recvSeconds, eventsPerSecond: Math.round(EVENTS / recvSeconds) },
        walMode: wal,
        pollMode: poll,
        walRatioToDecodingCeiling: Number((recvSeconds / wal.seconds).toFixed(2)),
        pollToWalPostgresCpuRatio: Number(
          (poll.postgresCpuUsPerEvent / wal.postgresCpuUsPerEvent).toFixed(2),
        ),
      },
      null,
      2,
    ),
  );
} finally {
  await db.end().catch(() => undefined);
  await stopStack({ stateDir: STATE_DIR, log });
}

async function measureDrain(isDone, extraArgs = []) {
  const cpuBefore = postgresCpuMs(dataDir);
  const started = Date.now();
  const relay = startRelay(url, brokers, extraArgs);
  let peakRssKb = 0;
  await waitFor(async () => {
    peakRssKb = Math.max(peakRssKb, readRssKb(relay.pid));
    return isDone();
  }, 600_000);
  const seconds = (Date.now() - started) / 1000;
  const cpuMs = postgresCpuMs(dataDir) - cpuBefore;
  await stopRelay(relay);
  return {
    seconds,
    eventsPerSecond: Math.round(EVENTS / seconds),
    peakRssMiB: Math.round(peakRssKb / 1024),
    postgresCpuUsPerEvent: Math.round((cpuMs * 1000) / EVENTS),
  };
}
