// Helpers shared by the benchmark scripts (plain ESM, run after `npm run build`).
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

import { ROOT } from '../stack/stack.mjs';

export const CLI = join(ROOT, 'dist', 'cli', 'main.js');
export const log = (m) => console.error(`bench: ${m}`);

export function runCli(args) {
  const r = spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`walbox ${args[0]} failed: ${r.stderr}`);
}

/** `walbox run`; BENCH_CPU_PROF=dir writes a V8 CPU profile there, BENCH_RELAY_ARGS adds flags. */
export function startRelay(databaseUrl, kafkaBrokers, extraArgs = []) {
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
      ...extraArgs,
      '--database-url',
      databaseUrl,
      '--kafka-brokers',
      kafkaBrokers,
      '--metrics-port',
      '0',
      '--log-level',
      'warn',
    ],
    { stdio: ['ignore', 'ignore', 'inherit'] },
  );
}

export async function stopRelay(relay) {
  relay.kill('SIGTERM');
  await new Promise((resolve) => relay.on('exit', resolve));
}

export function readRssKb(pid) {
  try {
    return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
  } catch {
    return 0;
  }
}

/** CPU milliseconds used so far by the cluster: the postmaster and every process it started. */
export function postgresCpuMs(dataDir) {
  const postmaster = Number(readFileSync(join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
  let ticks = 0;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const pid = Number(entry);
      const ppid = Number(fields[1]);
      if (pid === postmaster || ppid === postmaster) ticks += Number(fields[11]) + Number(fields[12]);
    } catch {
      // The process exited while we looked.
    }
  }
  return ticks * 10; // USER_HZ is 100 on Linux
}

export async function createTopic(kafkaBrokers, topic, configEntries = []) {
  const { Kafka, logLevel } = (await import('kafkajs')).default;
  const admin = new Kafka({ brokers: [kafkaBrokers], logLevel: logLevel.NOTHING }).admin();
  await admin.connect();
  await admin.createTopics({
    topics: [{ topic, numPartitions: 3, replicationFactor: 1, configEntries }],
    waitForLeaders: true,
  });
  await admin.disconnect();
}

export async function waitFor(condition, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('bench: timed out');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Writes `n` single-event transactions with a server-side loop (fast, and each is its own commit). */
export async function writeBacklog(db, n) {
  await db.query(`CREATE OR REPLACE PROCEDURE bench_write(n int) LANGUAGE plpgsql AS $$
    BEGIN
      FOR i IN 1..n LOOP
        INSERT INTO outbox_events (aggregate_type, aggregate_id, event_type, payload)
        VALUES ('order', 'agg-' || (i % 1000), 'bench', jsonb_build_object('i', i, 'note', 'a small event'));
        COMMIT;
      END LOOP;
    END $$`);
  await db.query('CALL bench_write($1)', [n]);
}
