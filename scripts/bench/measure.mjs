// Measuring tools of the benchmark: process CPU and RSS from /proc, slot lag, a topic's record count from its
// offsets, and a consumer that records when the broker appended each event (topics use LogAppendTime).
import { readdirSync, readFileSync } from 'node:fs';

import kafkajs from 'kafkajs';

const TICKS_PER_SECOND = 100; // USER_HZ on Linux
let readers = 0;

/**
 * A process's /proc/<pid>/stat fields after the command name, as numbers (index 1 is the parent pid, 11–14 its
 * user, system, reaped children's user and reaped children's system ticks); undefined once it is gone.
 */
function readStat(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat
      .slice(stat.lastIndexOf(')') + 2)
      .split(' ')
      .map(Number);
  } catch {
    return undefined;
  }
}

/** CPU seconds (user + system) used so far by a process; 0 once it is gone. */
export function cpuSeconds(pid) {
  const f = readStat(pid);
  return f === undefined ? 0 : (f[11] + f[12]) / TICKS_PER_SECOND;
}

/**
 * A process's peak resident set so far, as the kernel keeps it (VmHWM): every page is counted, so no peak is missed
 * between samples (a 10k-event drain of 8 KB events lasts about a second); 0 once the process is gone.
 */
export function peakRssBytes(pid) {
  try {
    return 1024 * Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
  } catch {
    return 0;
  }
}

/**
 * PostgreSQL's whole CPU (user + system seconds): the postmaster, every live server process, and what the
 * processes that exited already used (the postmaster's reaped-children times).
 */
export function postgresCpuSeconds(postmasterPid) {
  const own = readStat(postmasterPid);
  if (own === undefined) return 0;
  let total = (own[11] + own[12] + own[13] + own[14]) / TICKS_PER_SECOND;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    // A child that exited meanwhile has no stat: its time is in the postmaster's reaped-children times now.
    const f = readStat(entry);
    if (f?.[1] === postmasterPid) total += cpuSeconds(entry);
  }
  return total;
}

/**
 * What the database spends on a run: PostgreSQL CPU seconds and WAL bytes written between start and stop (the
 * backlog is written before, so in a drain that is the readers' own cost: decoding, and walbox's marking).
 */
export async function startDbMeter(db) {
  const { rows } = await db.query(
    `SELECT pg_current_wal_lsn()::text AS lsn, current_setting('data_directory') AS dir`,
  );
  const postmasterPid = Number(readFileSync(`${rows[0].dir}/postmaster.pid`, 'utf8').split('\n')[0]);
  const cpuBefore = postgresCpuSeconds(postmasterPid);
  const lsnBefore = rows[0].lsn;
  return {
    async stop() {
      const cpu = postgresCpuSeconds(postmasterPid) - cpuBefore;
      const { rows: after } = await db.query(
        'SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), $1::pg_lsn)::float8 AS bytes',
        [lsnBefore],
      );
      return { cpuSeconds: cpu, walBytes: after[0].bytes };
    },
  };
}

/** Busy core-seconds of the whole machine so far (every CPU's time minus idle and iowait), from /proc/stat. */
export function machineBusySeconds() {
  const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
  const total = fields.slice(0, 8).reduce((a, b) => a + b, 0);
  return (total - (fields[3] ?? 0) - (fields[4] ?? 0)) / TICKS_PER_SECOND;
}

/**
 * Where the machine's CPU goes during a run: busy core-seconds overall, the broker's, and this benchmark
 * process's own (in a drain it only asks for offsets; in a rate run its consumer records every append).
 */
export function startMachineMeter({ brokerPidFile }) {
  const brokerPid = Number(readFileSync(brokerPidFile, 'utf8').trim());
  const before = {
    busy: machineBusySeconds(),
    broker: cpuSeconds(brokerPid),
    bench: process.cpuUsage(),
  };
  return {
    stop() {
      const bench = process.cpuUsage(before.bench);
      return {
        busySeconds: machineBusySeconds() - before.busy,
        brokerSeconds: cpuSeconds(brokerPid) - before.broker,
        benchSeconds: (bench.user + bench.system) / 1e6,
      };
    },
  };
}

/**
 * Samples a process's peak RSS and a slot's lag every 200 ms until stopped (and the peak RSS once more then); keeps
 * the peaks and the last CPU reading.
 */
export function startSampler({ pid, db, slot }) {
  const peaks = { rssBytes: 0, slotLagBytes: 0, cpuSeconds: 0 };
  let running = true;
  const loop = (async () => {
    while (running) {
      peaks.rssBytes = Math.max(peaks.rssBytes, peakRssBytes(pid));
      const cpu = cpuSeconds(pid);
      if (cpu > 0) peaks.cpuSeconds = cpu;
      if (slot !== undefined) {
        const { rows } = await db
          .query(
            `SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), confirmed_flush_lsn)::float8 AS lag
               FROM pg_replication_slots WHERE slot_name = $1`,
            [slot],
          )
          .catch(() => ({ rows: [] }));
        peaks.slotLagBytes = Math.max(peaks.slotLagBytes, rows[0]?.lag ?? 0);
      }
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      peaks.rssBytes = Math.max(peaks.rssBytes, peakRssBytes(pid));
      return peaks;
    },
  };
}

/**
 * Reads a topic from the beginning and records, per event id, the broker's append time. walbox puts the id in
 * the `id` header, Debezium's outbox router too; without one the message key and offset stand in.
 */
export async function startAppendRecorder(brokers, topic) {
  const kafka = new kafkajs.Kafka({ brokers: [brokers], logLevel: kafkajs.logLevel.NOTHING });
  // A group of its own each time: a second read of a topic must start from its beginning again.
  readers++;
  const consumer = kafka.consumer({
    groupId: `bench-${topic}-${process.pid}-${readers}`,
    maxWaitTimeInMs: 50,
  });
  const appended = new Map();
  let messages = 0;
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  await consumer.run({
    eachMessage: async ({ partition, message }) => {
      messages++;
      const id = message.headers?.id?.toString() ?? `${partition}:${message.offset}`;
      if (!appended.has(id)) appended.set(id, Number(message.timestamp));
    },
  });
  return {
    appended,
    messages: () => messages,
    stop: () => consumer.disconnect(),
  };
}

/**
 * Counts a topic's records from the broker's end offsets (one small request per call), so that a drain can be
 * watched without a consumer reading along: on two shared cores its reading would cost every system about a
 * tenth of the machine, which the ceilings (that run no consumer) do not pay.
 */
export async function startOffsetWatcher(brokers, topic) {
  const kafka = new kafkajs.Kafka({ brokers: [brokers], logLevel: kafkajs.logLevel.NOTHING });
  const admin = kafka.admin();
  await admin.connect();
  return {
    async records() {
      const offsets = await admin.fetchTopicOffsets(topic);
      return offsets.reduce((sum, o) => sum + Number(o.high) - Number(o.low), 0);
    },
    stop: () => admin.disconnect(),
  };
}

/** Reads a topic's first `messages` records (after the drain) and records each event id's append time. */
export async function readAppends(brokers, topic, messages, timeoutMs) {
  const recorder = await startAppendRecorder(brokers, topic);
  try {
    await waitUntil(() => recorder.messages() >= messages, timeoutMs, 100);
    return { appended: recorder.appended, messages: recorder.messages() };
  } finally {
    await recorder.stop();
  }
}

/** Waits until `condition()` holds; false when `timeoutMs` passed first. */
export async function waitUntil(condition, timeoutMs, intervalMs = 100) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await condition()) return true;
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

/** p50/p95/p99/max of a list of milliseconds, rounded to 0.1 ms. */
export function percentiles(values) {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const pick = (q) =>
    Math.round(sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] * 10) / 10;
  return { p50: pick(0.5), p95: pick(0.95), p99: pick(0.99), max: pick(1) };
}
