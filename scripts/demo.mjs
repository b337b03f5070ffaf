#!/usr/bin/env node
// npm run demo [-- --seconds 30 --rate 200]: starts a private PostgreSQL (wal_level=logical) and Kafka, migrates,
// runs `walbox run` in WAL mode and a demo order service, shows events flowing and the slot lag, then stops
// everything it started. Needs what `npm test` needs (Node, Java 17, Maven, PostgreSQL binaries).
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, openSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';

import kafkajs from 'kafkajs';
import pg from 'pg';

import { ROOT, findFreePort, readState, startStack, stopStack } from './stack/stack.mjs';

const { values } = parseArgs({
  options: { seconds: { type: 'string', default: '30' }, rate: { type: 'string', default: '200' } },
});
const SECONDS = Number(values.seconds);
const RATE = Number(values.rate);
const CLI = join(ROOT, 'dist', 'cli', 'main.js');
const stateDir = join(ROOT, '.stack', 'demo');
const say = (m) => console.log(`demo: ${m}`);
if (!existsSync(CLI)) throw new Error('dist/ is missing: run `npm run build` (npm run demo does)');

if (readState(stateDir) !== undefined) {
  say('a previous demo left its stack behind: stopping it first');
  await stopStack({ stateDir, log: () => undefined });
}
say('starting PostgreSQL (wal_level=logical) and Kafka 4.1 (KRaft) on free loopback ports…');
const state = await startStack({ stateDir, log: () => undefined });
// The demo's own services only: WALBOX_* from the shell would win over these and could point at a real database.
const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('WALBOX_')));
Object.assign(env, { WALBOX_DATABASE_URL: state.postgres.url, WALBOX_KAFKA_BROKERS: state.kafka.brokers });
const children = [];
const db = new pg.Client({ connectionString: state.postgres.url });
let consumer;
const stopAll = async () => {
  for (const child of children) if (child.exitCode === null) child.kill('SIGTERM');
  await Promise.all(children.map((c) => (c.exitCode === null ? new Promise((r) => c.on('exit', r)) : null)));
  await consumer?.disconnect().catch(() => undefined);
  await db.end().catch(() => undefined);
  await stopStack({ stateDir, log: () => undefined });
};
process.on('SIGINT', () => {
  say('interrupted: stopping everything');
  void stopAll().then(() => process.exit(130));
});

try {
  await db.connect();
  say(`PostgreSQL ${state.postgres.url.replace(/:[^:@/]+@/, ':***@')}, Kafka ${state.kafka.brokers}`);
  const migrate = spawnSync(process.execPath, [CLI, 'migrate'], { env, encoding: 'utf8' });
  if (migrate.status !== 0) throw new Error(migrate.stderr);
  process.stdout.write(migrate.stdout);

  const kafka = new kafkajs.Kafka({ brokers: [state.kafka.brokers], logLevel: kafkajs.logLevel.NOTHING });
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({ waitForLeaders: true, topics: [{ topic: 'outbox.order', numPartitions: 3 }] });
  await admin.disconnect();
  say('created topic outbox.order (3 partitions)');

  const metricsPort = await findFreePort();
  const logFile = join(stateDir, 'walbox.log');
  const relayLog = openSync(logFile, 'a');
  const relay = spawn(
    process.execPath,
    [CLI, 'run', '--metrics-port', String(metricsPort), '--log-format', 'json'],
    {
      env,
      stdio: ['ignore', relayLog, relayLog],
    },
  );
  children.push(relay);
  say(`walbox run (WAL mode), metrics on http://127.0.0.1:${metricsPort}/metrics, logs in ${logFile}`);
  await waitForReady(metricsPort);

  let consumed = 0;
  consumer = kafka.consumer({ groupId: 'walbox-demo', maxWaitTimeInMs: 100 });
  await consumer.connect();
  await consumer.subscribe({ topic: 'outbox.order', fromBeginning: true });
  let example;
  await consumer.run({
    eachMessage: async ({ message }) => {
      consumed++;
      example ??= { key: message.key?.toString(), value: message.value?.toString() };
    },
  });

  const writer = spawn(process.execPath, [join(ROOT, 'dist', 'demo', 'main.js')], {
    env: { ...env, DATABASE_URL: state.postgres.url, DEMO_RATE: String(RATE) },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  children.push(writer);
  say(
    `demo order service: ${RATE} orders/s, each order and its event in one transaction; watching for ${SECONDS} s`,
  );
  console.log('');
  console.log('   time   orders   consumed from Kafka   events/s   slot lag   pending   ready');
  let previous = 0;
  for (let t = 1; t <= SECONDS; t++) {
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const m = await scrape(metricsPort);
    const orders = await countOrders();
    const published = m.get('outbox_events_published_total') ?? 0;
    console.log(
      `${String(t).padStart(6)}s ${String(orders).padStart(8)} ${String(consumed).padStart(21)} ${String(published - previous).padStart(10)} ` +
        `${formatBytes(m.get('outbox_replication_slot_lag_bytes') ?? 0).padStart(10)} ${String(m.get('outbox_events_pending') ?? 0).padStart(9)}   ${(await isReady(metricsPort)) ? 'yes' : 'no'}`,
    );
    previous = published;
  }
  writer.kill('SIGTERM');
  await new Promise((resolve) => writer.on('exit', resolve));
  const orders = await countOrders();
  const deadline = Date.now() + 30_000;
  while (consumed < orders && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 200));
  console.log('');
  say(
    `${orders} orders committed, ${consumed} events consumed back from Kafka${consumed >= orders ? ': all delivered' : ''}`,
  );
  if (example) say(`one of them: key ${example.key}, value ${example.value}`);
  const status = spawnSync(process.execPath, [CLI, 'status'], { env, encoding: 'utf8' });
  process.stdout.write(status.stdout);
} finally {
  say('stopping walbox, the demo writer, Kafka and PostgreSQL');
  await stopAll();
}

async function scrape(port) {
  const samples = new Map();
  try {
    const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    for (const line of text.split('\n')) {
      if (line.startsWith('#') || line === '') continue;
      const cut = line.lastIndexOf(' ');
      samples.set(line.slice(0, cut), Number(line.slice(cut + 1)));
    }
  } catch {
    // Not up yet: an empty sample.
  }
  return samples;
}

async function isReady(port) {
  try {
    return (await fetch(`http://127.0.0.1:${port}/readyz`)).ok;
  } catch {
    return false;
  }
}

async function waitForReady(port) {
  const deadline = Date.now() + 60_000;
  while (!(await isReady(port))) {
    if (Date.now() > deadline) throw new Error('walbox did not become ready within 60 s (see its log)');
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

async function countOrders() {
  const { rows } = await db.query('SELECT count(*)::int AS n FROM demo_orders').catch(() => ({ rows: [] }));
  return rows[0]?.n ?? 0;
}

function formatBytes(bytes) {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}
