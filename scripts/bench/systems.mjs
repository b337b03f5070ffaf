// The systems under test, behind one shape: start() resolves once the system streams (or polls), and returns
// { pid, stop() }. walbox runs as users run it (the built CLI); Debezium as Kafka Connect standalone.
import { spawn, spawnSync } from 'node:child_process';
import { join } from 'node:path';

import { ROOT } from '../stack/stack.mjs';
import { readRelayEnv, readRelayNodeOptions, splitArgs } from './relaySettings.mjs';
import { waitUntil } from './measure.mjs';

// BENCH_WALBOX_CLI runs another build (e.g. a worktree of an older commit) for a before/after comparison.
const CLI = process.env.BENCH_WALBOX_CLI ?? join(ROOT, 'dist', 'cli', 'main.js');

/** `walbox migrate` for one benchmark schema (poll schemas get the NOTIFY trigger, as a latency-minded user would). */
export function migrate({ databaseUrl, schema, publication, notifyTrigger = false }) {
  const args = ['migrate', '--database-url', databaseUrl, '--schema', schema, '--publication', publication];
  if (notifyTrigger) args.push('--notify-trigger');
  const run = spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`walbox migrate failed: ${run.stderr}`);
}

async function slotActive(db, slot) {
  const { rows } = await db.query('SELECT active FROM pg_replication_slots WHERE slot_name = $1', [slot]);
  return rows[0]?.active === true;
}

/**
 * walbox in WAL or poll mode; BENCH_CPU_PROF=dir writes a V8 CPU profile of the relay there, and
 * BENCH_WALBOX_ARGS (space-separated) adds flags to `walbox run`, e.g. "--batch-size 1000";
 * BENCH_WALBOX_NODE runs the relay on another Node binary.
 */
export function walboxSystem(mode) {
  return {
    name: mode === 'wal' ? 'walbox WAL' : 'walbox poll',
    usesSlot: mode === 'wal',
    async start({ db, databaseUrl, brokers, schema, publication, slot, topicPrefix }) {
      const profile = process.env.BENCH_CPU_PROF
        ? ['--cpu-prof', '--cpu-prof-dir', process.env.BENCH_CPU_PROF]
        : [];
      const child = spawn(
        process.env.BENCH_WALBOX_NODE ?? process.execPath,
        [
          ...readRelayNodeOptions(),
          ...profile,
          CLI,
          'run',
          '--mode',
          mode,
          '--database-url',
          databaseUrl,
          '--kafka-brokers',
          brokers,
          '--schema',
          schema,
          '--publication',
          publication,
          '--slot',
          slot,
          '--topic-template',
          `${topicPrefix}.{aggregate_type}`,
          '--metrics-port',
          '0',
          '--log-level',
          'warn',
          '--log-format',
          'json',
          ...splitArgs(process.env.BENCH_WALBOX_ARGS),
        ],
        { stdio: ['ignore', 'ignore', 'inherit'], env: { ...process.env, ...readRelayEnv() } },
      );
      const exited = new Promise((resolve) => child.on('exit', resolve));
      if (mode === 'wal') {
        const ready = await waitUntil(() => slotActive(db, slot), 60_000);
        if (!ready) throw new Error('walbox did not start streaming within 60 s');
      } else {
        await new Promise((resolve) => setTimeout(resolve, 1_000));
      }
      return {
        pid: child.pid,
        async stop() {
          child.kill('SIGTERM');
          await exited;
        },
      };
    },
  };
}

/** Debezium's PostgreSQL connector with the outbox EventRouter, on Kafka Connect standalone. */
export function debeziumSystem(tuned) {
  return {
    name: tuned ? 'Debezium tuned' : 'Debezium',
    usesSlot: true,
    async start({ databaseUrl, brokers, schema, publication, slot, topicPrefix, runDir, log }) {
      const { startDebezium } = await import('./debezium.mjs');
      const handle = await startDebezium({
        root: ROOT,
        runDir,
        brokers,
        databaseUrl,
        slot,
        publication,
        schema,
        table: 'outbox_events',
        topicPrefix,
        tuned,
        dropSlotOnStop: false,
        log,
      });
      // startDebezium resolves once the task runs and its slot is active.
      return { pid: handle.pid, stop: () => handle.stop() };
    },
  };
}
