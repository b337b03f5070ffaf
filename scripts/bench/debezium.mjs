// The Debezium baseline of the benchmark: Kafka Connect standalone (connect-runtime from Maven Central)
// running the Debezium PostgreSQL connector with the outbox EventRouter SMT, against the private test stack.
//
// Plain Node ESM (no build step). The jars come through tools/connect/pom.xml into
// <root>/.cache/connect/<version>/{lib,plugins}; each start writes its properties, offsets, log and pid file
// to its own runDir. See shared/reference/kafka-from-maven.md §9 for where the settings come from.
//
//   await fetchConnect({ root });
//   const dbz = await startDebezium({ root, runDir, brokers, databaseUrl, tuned: false });
//   ... write the backlog, consume <topicPrefix>.<aggregate_type> ...
//   await dbz.stop();
//
// The benchmark reads walbox's own table shape (BENCH_EVENT_ROUTER). Other callers pass their own EventRouter
// settings (`eventRouter`), connector properties (`connectorConfig`), and more connectors for the same worker
// (`extraConnectors`, each with its own name, slot and table): the parity test against walbox's Debezium
// preset (test/parity/debeziumParity.test.ts) runs Debezium's documented defaults that way.

import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';

import pg from 'pg';

import { findFreePort } from '../stack/kafka.mjs';

// keep in step with tools/connect/pom.xml: the cache folder is named after the Connect version
export const CONNECT_VERSION = '4.1.2';
export const DEBEZIUM_VERSION = '3.4.3.Final';
export const CONNECTOR_NAME = 'walbox-debezium-outbox';

const defaultLog = (msg) => console.error(`[debezium] ${msg}`);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const exists = (p) => fs.existsSync(p);
const javaBin = () => (process.env.JAVA_HOME ? path.join(process.env.JAVA_HOME, 'bin', 'java') : 'java');

function cacheDir(root) {
  return path.join(path.resolve(root), '.cache', 'connect', CONNECT_VERSION);
}

/** Runs mvn, resolving { code, output }. */
function run(cmd, args, cwd) {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    const chunks = [];
    child.stdout.on('data', (c) => chunks.push(c));
    child.stderr.on('data', (c) => chunks.push(c));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, output: Buffer.concat(chunks).toString('utf8') }));
  });
}

/**
 * Resolves the Connect worker jars and the Debezium plug-in with Maven once (a .complete marker guards it)
 * and returns { lib, plugins }. mvn fills a private temp folder that is renamed into place, so an interrupted
 * run never leaves a half-filled cache behind (copy-dependencies never deletes stale jars either).
 */
export async function fetchConnect({ root, log = defaultLog }) {
  const dir = cacheDir(root);
  const result = { lib: path.join(dir, 'lib'), plugins: path.join(dir, 'plugins') };
  if (exists(path.join(dir, '.complete'))) return result;

  const tmp = `${dir}.partial-${process.pid}-${randomBytes(4).toString('hex')}`;
  log(
    `resolving connect-runtime ${CONNECT_VERSION} + Debezium ${DEBEZIUM_VERSION} (tools/connect/pom.xml) ...`,
  );
  const t0 = Date.now();
  const pom = path.join(path.resolve(root), 'tools', 'connect', 'pom.xml');
  const args = ['-B', '-ntp', '-q', '-f', pom, 'package'];
  const res = await run(process.env.MVN || 'mvn', [
    ...args,
    `-Dconnect.lib.dir=${path.join(tmp, 'lib')}`,
    `-Dconnect.plugin.dir=${path.join(tmp, 'plugins')}`,
  ]).catch((err) => ({ code: -1, output: err.message }));
  const jars = (sub) => (exists(path.join(tmp, sub)) ? fs.readdirSync(path.join(tmp, sub)) : []);
  const ok =
    res.code === 0 &&
    jars('lib').includes(`connect-runtime-${CONNECT_VERSION}.jar`) &&
    jars('plugins/debezium-connector-postgres').includes(
      `debezium-connector-postgres-${DEBEZIUM_VERSION}.jar`,
    );
  if (!ok) {
    await fsp.rm(tmp, { recursive: true, force: true });
    const why = res.code === 0 ? 'left no connect-runtime or Debezium jar' : `failed (exit ${res.code})`;
    throw new Error(`fetchConnect: mvn ${args.join(' ')} ${why}:\n${res.output.slice(-4000)}`);
  }
  await fsp.rm(path.join(tmp, 'target'), { recursive: true, force: true }); // Maven's scratch (see the pom)
  await fsp.writeFile(path.join(tmp, '.complete'), `${new Date().toISOString()}\n`);
  if (!exists(path.join(dir, '.complete'))) {
    await fsp.rm(dir, { recursive: true, force: true }); // a leftover without its marker
    await fsp.rename(tmp, dir);
  } else {
    await fsp.rm(tmp, { recursive: true, force: true }); // another run finished first
  }
  log(`Connect + Debezium in ${dir} (${((Date.now() - t0) / 1000).toFixed(1)} s)`);
  return result;
}

/** Java .properties text; backslashes and line breaks are all that values need escaped. */
function propertiesText(comment, entries) {
  const esc = (v) => String(v).replaceAll('\\', '\\\\').replaceAll('\n', '\\n');
  return `# ${comment}\n${Object.entries(entries)
    .map(([k, v]) => `${k}=${esc(v)}`)
    .join('\n')}\n`;
}

/**
 * Throughput knobs, applied only when tuned = true (defaults are Connect 4.1 / Debezium 3.4 out of the box).
 * Connect's source-task producer defaults (Worker.baseProducerConfigs): acks=all, enable.idempotence=false,
 * max.in.flight.requests.per.connection=1, plus the client's linger.ms=5 and batch.size=16384.
 */
const TUNED_WORKER = {
  // 5 requests in flight per broker connection instead of 1; idempotence keeps the order and drops
  // duplicates on retry
  'producer.max.in.flight.requests.per.connection': 5,
  'producer.enable.idempotence': true,
  // bigger batches (256 KiB instead of 16 KiB), filled for up to 10 ms: fewer, larger produce requests
  'producer.batch.size': 262144,
  'producer.linger.ms': 10,
  // (compression stays off, as walbox's default is none: both sides ship the same bytes)
  // commit source offsets (= confirm the LSN to PostgreSQL) every 5 s instead of 60 s: shorter redelivery
  // after a crash and earlier WAL recycling; the commit runs off the task thread, so the cost is small
  'offset.flush.interval.ms': 5000,
};
const TUNED_CONNECTOR = {
  // records handed to Connect per poll() (default 2048): fewer round trips through the task loop
  'max.batch.size': 8192,
  // the buffer between the replication stream reader and poll() (default 8192; must exceed max.batch.size):
  // the reader keeps decoding while the producer is busy
  'max.queue.size': 32768,
  // how long poll() waits for an empty queue to fill (default 500 ms): caps the latency added when idle
  'poll.interval.ms': 50,
};

function parseDatabaseUrl(databaseUrl) {
  const u = new URL(databaseUrl);
  return {
    'database.hostname': u.hostname,
    'database.port': u.port || 5432,
    'database.user': decodeURIComponent(u.username),
    'database.password': decodeURIComponent(u.password),
    'database.dbname': decodeURIComponent(u.pathname.slice(1)),
  };
}

/**
 * One connector's properties: the PostgreSQL connector on `schema.table` with the EventRouter SMT configured by
 * `eventRouter` (its keys without the `transforms.outbox.` prefix).
 */
function connectorProperties({
  name,
  slot,
  table,
  eventRouter,
  databaseUrl,
  topicPrefix,
  dropSlotOnStop,
  publication,
  schema,
}) {
  return {
    name,
    'connector.class': 'io.debezium.connector.postgresql.PostgresConnector',
    'tasks.max': 1,
    ...parseDatabaseUrl(databaseUrl),
    // prefix of Debezium's own topics (none are written here: the EventRouter renames every data record)
    'topic.prefix': topicPrefix,
    // built into PostgreSQL 10+ (Debezium's default, decoderbufs, needs a server extension)
    'plugin.name': 'pgoutput',
    'slot.name': slot,
    // by default do not leave a slot pinning WAL behind; the benchmark drops its slots itself
    'slot.drop.on.stop': dropSlotOnStop,
    // `walbox migrate` created the publication (publish = insert); Debezium must not alter it
    'publication.name': publication,
    'publication.autocreate.mode': 'disabled',
    'table.include.list': `${schema}.${table}`,
    // no snapshot: the benchmark writes its backlog after the slot exists
    'snapshot.mode': 'no_data',
    'tombstones.on.delete': false,
    // the outbox SMT: one Kafka record per inserted row
    transforms: 'outbox',
    'transforms.outbox.type': 'io.debezium.transforms.outbox.EventRouter',
    ...Object.fromEntries(
      Object.entries(eventRouter).map(([k, v]) => [
        `transforms.outbox.${k}`,
        String(v).replaceAll('${topicPrefix}', topicPrefix),
      ]),
    ),
    // and not the four __debezium.context.* headers Debezium 3.x adds to every record by default
    'extended.headers.enabled': false,
    // jsonb arrives as a string (io.debezium.data.Json): StringConverter writes the JSON text as is, and
    // the key as plain aggregate_id; the worker's JsonConverter would quote both ("agg-1", "{\"n\": 1}")
    'key.converter': 'org.apache.kafka.connect.storage.StringConverter',
    'value.converter': 'org.apache.kafka.connect.storage.StringConverter',
  };
}

/** Resolves once the replication slot exists and a walsender holds it (the connector streams from it). */
export async function waitForSlotActive({ databaseUrl, slot, timeoutMs = 60000, isAlive = () => true }) {
  const db = new pg.Client({ connectionString: databaseUrl });
  await db.connect();
  try {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const { rows } = await db.query('SELECT active FROM pg_replication_slots WHERE slot_name = $1', [slot]);
      if (rows[0]?.active === true) return;
      if (!isAlive()) throw new Error(`the Connect worker exited before slot ${slot} became active`);
      if (Date.now() > deadline) throw new Error(`slot ${slot} not active after ${timeoutMs} ms`);
      await sleep(100);
    }
  } finally {
    await db.end();
  }
}

/** GET /connectors/<name>/status, or null while the REST server is not up or the connector not registered. */
async function connectorStatus(restPort, name) {
  try {
    const res = await fetch(`http://127.0.0.1:${restPort}/connectors/${encodeURIComponent(name)}/status`, {
      signal: AbortSignal.timeout(2000),
    });
    return res.ok ? await res.json() : null;
  } catch {
    return null;
  }
}

/**
 * The benchmark's EventRouter settings (without the `transforms.outbox.` prefix): walbox's column names
 * instead of Debezium's defaults, and the headers walbox sets too (besides id), so both sides ship about the
 * same bytes. `${topicPrefix}` in a value is replaced by the connector's topic prefix.
 */
export const BENCH_EVENT_ROUTER = {
  'table.field.event.id': 'id', // also sent as header `id`
  'table.field.event.key': 'aggregate_id',
  'table.field.event.payload': 'payload',
  'route.by.field': 'aggregate_type',
  'route.topic.replacement': '${topicPrefix}.${routedByValue}',
  'table.fields.additional.placement':
    'event_type:header,aggregate_type:header,aggregate_id:header,created_at:header',
};

/**
 * Starts a Connect standalone worker with the Debezium outbox connector (detached, own process group, log in
 * runDir/connect.log) and resolves { pid, stop(), restPort, logFile, runDir } once the connector's task is
 * RUNNING and its replication slot is active, so that rows written from then on are captured
 * (snapshot.mode=no_data). The offsets file is wiped on each start: every start is a fresh baseline reading
 * from the slot's position.
 */
export async function startDebezium({
  root,
  runDir,
  brokers,
  databaseUrl,
  slot = 'debezium',
  publication = 'walbox',
  schema = 'public',
  table = 'outbox_events',
  topicPrefix = 'outbox',
  tuned = false,
  // The benchmark keeps the slot across a stop (created before the backlog, dropped by the benchmark itself).
  dropSlotOnStop = true,
  log = defaultLog,
  heap = '-Xmx512m',
  timeoutMs = 120000,
  name = CONNECTOR_NAME,
  // the EventRouter's settings, without the `transforms.outbox.` prefix ({} = Debezium's defaults)
  eventRouter = BENCH_EVENT_ROUTER,
  // more connector properties, applied last (converters, extended.headers.enabled, ...)
  connectorConfig = {},
  // more connectors in the same worker: [{ name, slot, schema, table, publication, topicPrefix, eventRouter,
  // connectorConfig }],
  // each one taking the options above for what it leaves out (name, slot and topicPrefix must differ;
  // topicPrefix defaults to <topicPrefix>_2, _3, ...)
  extraConnectors = [],
}) {
  const { lib, plugins } = await fetchConnect({ root, log });
  const dir = path.resolve(runDir);
  await fsp.mkdir(dir, { recursive: true });
  const files = {
    worker: path.join(dir, 'worker.properties'),
    connector: path.join(dir, 'connector.properties'),
    offsets: path.join(dir, 'offsets.dat'),
    logFile: path.join(dir, 'connect.log'),
    pidFile: path.join(dir, 'connect.pid'),
  };
  await fsp.rm(files.offsets, { force: true });
  const restPort = await findFreePort();

  await fsp.writeFile(
    files.worker,
    propertiesText(`Connect standalone worker (${tuned ? 'tuned' : 'defaults'}), written by debezium.mjs`, {
      'bootstrap.servers': brokers,
      // the workers' default converters; the connector overrides them below (raw key and value, like walbox)
      'key.converter': 'org.apache.kafka.connect.json.JsonConverter',
      'value.converter': 'org.apache.kafka.connect.json.JsonConverter',
      'key.converter.schemas.enable': false,
      'value.converter.schemas.enable': false,
      'offset.storage.file.filename': files.offsets,
      'plugin.path': plugins,
      // Debezium's jars carry ServiceLoader manifests: skip the reflective scan of every jar (faster start)
      'plugin.discovery': 'service_load',
      // loopback only, on a port of our own: several workers (or a developer's) never collide on 8083
      listeners: `http://127.0.0.1:${restPort}`,
      ...(tuned ? TUNED_WORKER : {}),
    }),
  );
  const connectors = [
    { name, slot, table, topicPrefix, publication, schema, eventRouter, connectorConfig },
    // a topic prefix of their own too: Debezium names its JMX metrics after it, and connectors sharing one
    // wait a minute per metrics set (12 retries) for a name the other holds
    ...extraConnectors.map((c, i) => ({
      eventRouter,
      connectorConfig,
      table,
      publication,
      schema,
      topicPrefix: `${topicPrefix}_${i + 2}`,
      ...c,
    })),
  ];
  const connectorFiles = [];
  for (const [i, c] of connectors.entries()) {
    const file = i === 0 ? files.connector : path.join(dir, `connector-${i + 1}.properties`);
    await fsp.writeFile(
      file,
      propertiesText(`Debezium outbox connector (${tuned ? 'tuned' : 'defaults'}), written by debezium.mjs`, {
        ...connectorProperties({ ...c, databaseUrl, dropSlotOnStop }),
        ...(tuned ? TUNED_CONNECTOR : {}),
        ...c.connectorConfig,
      }),
    );
    connectorFiles.push(file);
  }

  const fd = fs.openSync(files.logFile, 'a');
  let child;
  try {
    child = spawn(
      javaBin(),
      [
        ...heap.split(/\s+/).filter(Boolean),
        '-XX:+UseG1GC',
        '-XX:+ExitOnOutOfMemoryError',
        '-Djava.awt.headless=true',
        `-Dlog4j2.configurationFile=${path.resolve(root, 'tools', 'connect', 'log4j2.properties')}`,
        `-Dwalbox.connect.log.level=${process.env.DEBEZIUM_LOG_LEVEL ?? 'WARN'}`,
        '-cp',
        path.join(lib, '*'), // the JVM expands the wildcard
        'org.apache.kafka.connect.cli.ConnectStandalone',
        files.worker,
        ...connectorFiles,
      ],
      { cwd: dir, detached: true, stdio: ['ignore', fd, fd] },
    );
  } finally {
    fs.closeSync(fd);
  }
  let exited = null;
  child.on('exit', (code, signal) => (exited = code ?? signal));
  child.on('error', (err) => (exited = err.message));
  child.unref();
  const pid = child.pid;
  await fsp.writeFile(files.pidFile, `${pid}\n`);
  log(`started Connect pid ${pid} (REST 127.0.0.1:${restPort}, log ${files.logFile})`);

  const stop = async (timeout = 30000) => {
    if (exited === null) {
      try {
        process.kill(pid, 'SIGTERM'); // the shutdown hook stops the task, which drops the slot
      } catch {
        /* gone already */
      }
      const deadline = Date.now() + timeout;
      while (exited === null && Date.now() < deadline) await sleep(100);
      if (exited === null) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          /* gone already */
        }
        while (exited === null) await sleep(50);
      }
    }
    await fsp.rm(files.pidFile, { force: true });
  };

  const t0 = Date.now();
  try {
    for (const c of connectors) {
      for (;;) {
        if (exited !== null) throw new Error(`Connect exited (${exited})`);
        const status = await connectorStatus(restPort, c.name);
        const task = status?.tasks?.[0];
        if (task?.state === 'FAILED')
          throw new Error(`connector ${c.name}: task FAILED:\n${task.trace ?? ''}`);
        if (status?.connector?.state === 'RUNNING' && task?.state === 'RUNNING') break;
        if (Date.now() - t0 > timeoutMs)
          throw new Error(`connector ${c.name} not RUNNING after ${timeoutMs} ms`);
        await sleep(250);
      }
      // RUNNING comes before the streaming thread holds the slot: wait for that too
      await waitForSlotActive({ databaseUrl, slot: c.slot, timeoutMs, isAlive: () => exited === null });
    }
  } catch (err) {
    const tail = fs.readFileSync(files.logFile, 'utf8').split('\n').slice(-40).join('\n');
    log(`Debezium did not start: ${err.message}\n--- last lines of ${files.logFile} ---\n${tail}`);
    await stop(5000);
    throw err;
  }
  log(
    `Debezium ${DEBEZIUM_VERSION} streaming from slot${connectors.length > 1 ? 's' : ''} ${connectors.map((c) => c.slot).join(', ')} in ${((Date.now() - t0) / 1000).toFixed(1)} s`,
  );
  return { pid, stop, restPort, logFile: files.logFile, runDir: dir };
}
