// Measuring tools of the benchmark: process CPU and RSS from /proc, slot lag, and a consumer that records when
// the broker appended each event (topics use LogAppendTime).
import { readFileSync } from 'node:fs';

import kafkajs from 'kafkajs';

const TICKS_PER_SECOND = 100; // USER_HZ on Linux

/** CPU seconds (user + system) used so far by a process; 0 once it is gone. */
export function cpuSeconds(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
  } catch {
    return 0;
  }
}

export function rssBytes(pid) {
  try {
    return 1024 * Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
  } catch {
    return 0;
  }
}

/** Samples a process's RSS and a slot's lag every 200 ms until stopped; keeps the peaks and the last CPU reading. */
export function startSampler({ pid, db, slot }) {
  const peaks = { rssBytes: 0, slotLagBytes: 0, cpuSeconds: 0 };
  let running = true;
  const loop = (async () => {
    while (running) {
      peaks.rssBytes = Math.max(peaks.rssBytes, rssBytes(pid));
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
  const consumer = kafka.consumer({ groupId: `bench-${topic}-${process.pid}`, maxWaitTimeInMs: 50 });
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
