// Local Apache Kafka (KRaft, single combined node, loopback) for the test stack.
//
// Plain Node ESM, node: builtins only. The jars come from Maven Central through tools/kafka/pom.xml into
// <root>/.cache/kafka/<version>/lib (one folder per version, so jars of two versions never mix). Each broker
// gets its own runDir: server.properties, data/ (kept across restarts), broker.log, broker.pid.
//
//   const lib = await fetchKafka({ root, log });
//   const k = await startKafka({ root, runDir, log });        // k.brokers === '127.0.0.1:<port>'
//   await stopKafka({ runDir });
//   await startKafka({ root, runDir, port: k.port, controllerPort: k.controllerPort, log }); // same data
//
// See shared/reference/kafka-from-maven.md for where the settings come from.

import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';

import { SASL_USERS, makeTestCertificates } from './tls.mjs';

export const KAFKA_VERSION = '4.1.2';
// any valid 22-char base64url UUID (16 bytes); the same one Debezium's test harness uses
export const CLUSTER_ID = 'ldlg5yhkQeWtnUrZrC6edg';
export const READY_LINE = 'Kafka Server started';

const JVM_FLAGS = [
  '-XX:+UseG1GC',
  '-XX:MaxGCPauseMillis=20',
  '-XX:InitiatingHeapOccupancyPercent=35',
  '-XX:+ExplicitGCInvokesConcurrent',
  '-XX:MaxInlineLevel=15',
  '-Djava.awt.headless=true',
  '-XX:+ExitOnOutOfMemoryError',
];

const defaultLog = (msg) => console.log(`[kafka] ${msg}`);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const exists = (p) => fs.existsSync(p);

function javaBin() {
  const home = process.env.JAVA_HOME;
  if (home) {
    const bin = path.join(home, 'bin', 'java');
    if (exists(bin)) return bin;
  }
  return 'java';
}

function libDirFor(root) {
  return path.join(path.resolve(root), '.cache', 'kafka', KAFKA_VERSION, 'lib');
}

function paths(runDir) {
  const dir = path.resolve(runDir);
  return {
    dir,
    dataDir: path.join(dir, 'data'),
    props: path.join(dir, 'server.properties'),
    pidFile: path.join(dir, 'broker.pid'),
    portsFile: path.join(dir, 'broker.ports.json'),
    logFile: path.join(dir, 'broker.log'),
    formatLog: path.join(dir, 'format.log'),
  };
}

/** Runs a command, collecting its output; resolves { code, signal, output }. */
function run(cmd, args, opts = {}) {
  return new Promise((resolve, reject) => {
    let child;
    try {
      child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], ...opts });
    } catch (err) {
      reject(err);
      return;
    }
    const chunks = [];
    child.stdout.on('data', (c) => chunks.push(c));
    child.stderr.on('data', (c) => chunks.push(c));
    child.on('error', reject);
    child.on('close', (code, signal) =>
      resolve({ code, signal, output: Buffer.concat(chunks).toString('utf8') }),
    );
  });
}

function lastLines(text, n) {
  const lines = text.split('\n');
  if (lines.length && lines[lines.length - 1] === '') lines.pop();
  return lines.slice(-n).join('\n');
}

/** A free TCP port on 127.0.0.1 (the OS picks it). */
export async function findFreePort() {
  const [port] = await findFreePorts(1);
  return port;
}

/** n distinct free TCP ports on 127.0.0.1, held open together while the OS picks them. */
export async function findFreePorts(n) {
  const servers = [];
  try {
    for (let i = 0; i < n; i++) {
      const srv = net.createServer();
      servers.push(srv);
      await new Promise((resolve, reject) => {
        srv.once('error', reject);
        srv.listen({ host: '127.0.0.1', port: 0, exclusive: true }, resolve);
      });
    }
    return servers.map((s) => s.address().port);
  } finally {
    await Promise.all(servers.map((s) => new Promise((r) => (s.listening ? s.close(() => r()) : r()))));
  }
}

function tcpAccepts(port, host = '127.0.0.1', timeoutMs = 1000) {
  return new Promise((resolve) => {
    const sock = net.connect({ host, port });
    const done = (ok) => {
      sock.removeAllListeners();
      sock.destroy();
      resolve(ok);
    };
    sock.setTimeout(timeoutMs, () => done(false));
    sock.once('connect', () => done(true));
    sock.once('error', () => done(false));
  });
}

/**
 * Resolves the Kafka broker jars with Maven once (guarded by a .complete marker) and returns the lib dir.
 * Downloads into a private temp folder first and renames it into place, so a crash or a concurrent run never
 * leaves a half-filled lib dir behind.
 */
export async function fetchKafka({ root, log = defaultLog } = {}) {
  if (!root) throw new Error('fetchKafka: root (the repository root) is required');
  root = path.resolve(root);
  const lib = libDirFor(root);
  if (exists(path.join(lib, '.complete'))) return lib;

  const pom = path.join(root, 'tools', 'kafka', 'pom.xml');
  if (!exists(pom)) throw new Error(`fetchKafka: ${pom} not found`);
  const parent = path.dirname(lib);
  await fsp.mkdir(parent, { recursive: true });
  const tmp = path.join(parent, `lib.partial-${process.pid}-${randomBytes(4).toString('hex')}`);
  await fsp.rm(tmp, { recursive: true, force: true });
  await fsp.mkdir(tmp, { recursive: true });

  log(`resolving Apache Kafka ${KAFKA_VERSION} from Maven Central (tools/kafka/pom.xml) ...`);
  const t0 = Date.now();
  const mvn = process.env.MVN || 'mvn';
  const args = [
    '-B',
    '-ntp',
    '-q',
    '-f',
    pom,
    'dependency:copy-dependencies',
    '-DincludeScope=runtime',
    `-DoutputDirectory=${tmp}`,
  ];
  let res;
  try {
    res = await run(mvn, args, { cwd: root });
  } catch (err) {
    await fsp.rm(tmp, { recursive: true, force: true });
    if (err.code === 'ENOENT') {
      throw new Error(
        `fetchKafka: '${mvn}' not found: install Maven (Debian: apt-get install -y maven) and Java 17`,
      );
    }
    throw err;
  }
  if (res.code !== 0) {
    await fsp.rm(tmp, { recursive: true, force: true });
    log(`mvn failed (exit ${res.code ?? res.signal}):\n${lastLines(res.output, 60)}`);
    throw new Error(`fetchKafka: mvn dependency:copy-dependencies failed (exit ${res.code ?? res.signal})`);
  }
  const jars = (await fsp.readdir(tmp)).filter((f) => f.endsWith('.jar'));
  if (!jars.some((f) => f.startsWith(`kafka_2.13-${KAFKA_VERSION}`))) {
    await fsp.rm(tmp, { recursive: true, force: true });
    throw new Error(
      `fetchKafka: kafka_2.13-${KAFKA_VERSION}.jar missing after mvn (got ${jars.length} jars)`,
    );
  }
  await fsp.writeFile(path.join(tmp, '.complete'), `${new Date().toISOString()} ${jars.length} jars\n`);

  if (exists(path.join(lib, '.complete'))) {
    // another process finished first: keep its folder
    await fsp.rm(tmp, { recursive: true, force: true });
  } else {
    await fsp.rm(lib, { recursive: true, force: true }); // leftover without marker
    try {
      await fsp.rename(tmp, lib);
    } catch (err) {
      await fsp.rm(tmp, { recursive: true, force: true });
      if (!exists(path.join(lib, '.complete'))) throw err;
    }
  }
  log(`Kafka ${KAFKA_VERSION}: ${jars.length} jars in ${lib} (${((Date.now() - t0) / 1000).toFixed(1)} s)`);
  return lib;
}

// ---- pid bookkeeping ---------------------------------------------------------------------------------------

function readPid(pidFile) {
  try {
    const pid = Number.parseInt(fs.readFileSync(pidFile, 'utf8').trim(), 10);
    return Number.isInteger(pid) && pid > 0 ? pid : null;
  } catch {
    return null;
  }
}

/** True while pid is a live (non-zombie) process; on Linux also checks that it is our broker. */
function pidAlive(pid, propsFile) {
  try {
    process.kill(pid, 0);
  } catch (err) {
    if (err.code !== 'EPERM') return false;
  }
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    if (state === 'Z' || state === 'X') return false;
    if (propsFile) {
      // guard against a recycled pid: the broker's command line names its server.properties
      const cmdline = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8');
      if (!cmdline.includes('kafka.Kafka') || !cmdline.includes(propsFile)) return false;
    }
  } catch {
    // no /proc (not Linux) or the process just went away: fall back to kill(0)'s answer
    try {
      process.kill(pid, 0);
    } catch (err) {
      return err.code === 'EPERM';
    }
  }
  return true;
}

async function waitGone(pid, propsFile, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  while (pidAlive(pid, propsFile)) {
    if (Date.now() >= deadline) return false;
    await sleep(100);
  }
  return true;
}

/** Is the broker recorded in runDir/broker.pid running? */
export function isKafkaRunning({ runDir }) {
  const p = paths(runDir);
  const pid = readPid(p.pidFile);
  return pid !== null && pidAlive(pid, p.props);
}

/**
 * Stops the broker recorded in runDir/broker.pid (signal, wait up to timeoutMs, then SIGKILL) and removes the
 * pid file. Does nothing when no broker runs there. Resolves { pid, killed } (pid null if nothing ran).
 */
export async function stopKafka({ runDir, signal = 'SIGTERM', timeoutMs = 30000 }) {
  const p = paths(runDir);
  const pid = readPid(p.pidFile);
  if (pid === null || !pidAlive(pid, p.props)) {
    await fsp.rm(p.pidFile, { force: true });
    return { pid: null, killed: false };
  }
  let killed = signal === 'SIGKILL';
  try {
    process.kill(pid, signal);
  } catch (err) {
    if (err.code !== 'ESRCH') throw err;
  }
  if (!(await waitGone(pid, p.props, timeoutMs))) {
    killed = true;
    try {
      process.kill(pid, 'SIGKILL');
    } catch (err) {
      if (err.code !== 'ESRCH') throw err;
    }
    await waitGone(pid, p.props, 10000);
  }
  await fsp.rm(p.pidFile, { force: true });
  return { pid, killed };
}

/** SIGKILLs the broker at once (fault tests). The data directory stays as the crash left it. */
export async function killKafka({ runDir }) {
  return stopKafka({ runDir, signal: 'SIGKILL', timeoutMs: 10000 });
}

// ---- start --------------------------------------------------------------------------------------------------

async function writeServerProperties(root, p, port, controllerPort, proxied, secure) {
  const template = await fsp.readFile(path.join(root, 'tools', 'kafka', 'server.properties.in'), 'utf8');
  const text = template
    .replaceAll('@DATA_DIR@', p.dataDir)
    .replaceAll('@PORT@', String(port))
    .replaceAll('@CPORT@', String(controllerPort))
    .replaceAll('@XPORT@', String(proxied.port))
    .replaceAll('@XADVPORT@', String(proxied.advertisedPort))
    .replaceAll('@SPORT@', String(secure.port))
    .replaceAll('@KEYSTORE@', secure.keystore);
  const left = text.match(/@[A-Z_]+@/);
  if (left) throw new Error(`server.properties.in: unknown placeholder ${left[0]}`);
  await fsp.writeFile(p.props, text);
}

/** A short-lived Kafka tool JVM: small heap, quick start. */
function toolJvmArgs(lib, log4jConf) {
  return [
    '-Xms64m',
    '-Xmx256m',
    '-XX:TieredStopAtLevel=1',
    '-XX:+UseSerialGC',
    '-Djava.awt.headless=true',
    `-Dlog4j2.configurationFile=${log4jConf}`,
    '-cp',
    path.join(lib, '*'),
  ];
}

async function formatStorage({ lib, log4jConf, p, log }) {
  const t0 = Date.now();
  const args = [
    ...toolJvmArgs(lib, log4jConf),
    'kafka.tools.StorageTool',
    'format',
    '-t',
    CLUSTER_ID,
    '-c',
    p.props,
    '-g',
  ];
  const res = await run(javaBin(), args, { cwd: p.dir });
  await fsp.writeFile(p.formatLog, res.output);
  if (res.code !== 0) {
    log(`storage format failed (exit ${res.code ?? res.signal}):\n${lastLines(res.output, 60)}`);
    throw new Error(`startKafka: kafka-storage format failed (see ${p.formatLog})`);
  }
  log(`formatted ${p.dataDir} in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
}

/**
 * Adds (or replaces) a SCRAM-SHA-512 user through the admin API (kafka-configs --alter --add-config). Credentials
 * given to `kafka-storage format --add-scram` did not authenticate on 4.1.2, so this runs against the live broker.
 */
export async function addScramUser({
  lib,
  log4jConf,
  p,
  port,
  user,
  log = defaultLog,
  mechanism = 'SCRAM-SHA-512',
}) {
  const t0 = Date.now();
  const args = [
    ...toolJvmArgs(lib, log4jConf),
    'kafka.admin.ConfigCommand',
    '--bootstrap-server',
    `127.0.0.1:${port}`,
    '--alter',
    '--add-config',
    `${mechanism}=[iterations=4096,password=${user.password}]`,
    '--entity-type',
    'users',
    '--entity-name',
    user.username,
  ];
  const res = await run(javaBin(), args, { cwd: p.dir });
  if (res.code !== 0) {
    throw new Error(
      `kafka-configs: adding SCRAM user ${user.username} failed:\n${lastLines(res.output, 20)}`,
    );
  }
  log(`SCRAM user ${user.username} added in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
}

/** Changes a SCRAM user's password on the running broker in runDir (tests of rotated credentials). */
export async function setScramPassword({ root, runDir, username, password, log = defaultLog }) {
  const p = paths(runDir);
  const ports = JSON.parse(await fsp.readFile(p.portsFile, 'utf8'));
  const lib = libDirFor(path.resolve(root));
  const log4jConf = path.join(path.resolve(root), 'tools', 'kafka', 'log4j2.properties');
  await addScramUser({ lib, log4jConf, p, port: ports.port, user: { username, password }, log });
}

/** Lines of one start's log that name the cause of a failure (the tail is mostly shutdown noise). */
function causeLines(text, max = 12) {
  return text
    .split('\n')
    .filter((l) => /\b(ERROR|FATAL)\b|^Caused by:|^Exception in thread|^Error: /.test(l))
    .slice(0, max)
    .join('\n');
}

/**
 * Starts a single-node KRaft broker+controller in runDir (detached, own process group) and waits until it logs
 * "Kafka Server started" and its port accepts TCP. Formats runDir/data only when it is not formatted yet, so
 * a restart on the same runDir keeps its topics and messages. port/controllerPort default to the ones of the
 * previous start in this runDir, else to free loopback ports (then a lost race for a port is retried once with
 * new ports). Resolves { pid, port, controllerPort, brokers: '127.0.0.1:<port>', runDir, logFile, proxied }, where
 * proxied = { port, advertisedPort } is the listener a fault test reaches through its own proxy.
 */
export async function startKafka({
  root,
  runDir,
  port,
  controllerPort,
  log = defaultLog,
  timeoutMs = 90000,
  heap = '-Xms256m -Xmx512m',
  jvmArgs = [],
}) {
  if (!root) throw new Error('startKafka: root (the repository root) is required');
  if (!runDir) throw new Error('startKafka: runDir is required');
  root = path.resolve(root);
  const p = paths(runDir);
  await fsp.mkdir(p.dataDir, { recursive: true });

  if (isKafkaRunning({ runDir: p.dir })) {
    throw new Error(
      `startKafka: a broker already runs in ${p.dir} (pid ${readPid(p.pidFile)}); stop it first`,
    );
  }
  await fsp.rm(p.pidFile, { force: true });

  // same ports as last time on a restart, unless told otherwise
  let picked = false;
  let prev = {};
  try {
    prev = JSON.parse(await fsp.readFile(p.portsFile, 'utf8'));
  } catch {
    /* first start */
  }
  port ??= prev.port;
  controllerPort ??= prev.controllerPort;
  const pick = async () => {
    const free = (await findFreePorts(3)).filter((x) => x !== port && x !== controllerPort);
    return free;
  };
  const wantPort = port;
  const wantCPort = controllerPort;
  if (port == null || controllerPort == null) {
    const free = await pick();
    port ??= free.shift();
    controllerPort ??= free.shift();
    picked = true;
  }
  if (port === controllerPort) throw new Error('startKafka: port and controllerPort must differ');

  const lib = await fetchKafka({ root, log });
  const log4jConf = path.join(root, 'tools', 'kafka', 'log4j2.properties');

  // Ports of the two extra listeners, picked together and apart from the broker's (one by one, the OS can hand
  // the same port back).
  const spare =
    prev.proxied === undefined || prev.secure === undefined
      ? (await findFreePorts(5)).filter((x) => x !== port && x !== controllerPort)
      : [];
  // the PROXIED listener (fault tests): kept across restarts, as a test's proxy listens on the advertised port
  const proxied = prev.proxied ?? { port: spare.shift(), advertisedPort: spare.shift() };
  // the SASL_SSL listener (secure-connection tests): port and certificates kept across restarts
  const secure = prev.secure ?? {
    port: spare.shift(),
    ...makeTestCertificates(path.join(p.dir, 'tls')),
    brokers: '',
  };
  secure.brokers = `localhost:${secure.port}`;

  for (let attempt = 1; ; attempt++) {
    await writeServerProperties(root, p, port, controllerPort, proxied, secure);
    await fsp.writeFile(p.portsFile, JSON.stringify({ port, controllerPort, proxied, secure }) + '\n');
    const fresh = !exists(path.join(p.dataDir, 'meta.properties'));
    if (fresh) {
      await formatStorage({ lib, log4jConf, p, log });
    } else {
      log(`data dir ${p.dataDir} already formatted: keeping it`);
    }
    try {
      const started = await launch({
        lib,
        log4jConf,
        p,
        port,
        controllerPort,
        log,
        timeoutMs,
        heap,
        jvmArgs,
      });
      // SCRAM credentials live in the cluster metadata: added once, through the admin API of the running broker
      if (fresh) await addScramUser({ lib, log4jConf, p, port, user: SASL_USERS.scram, log });
      return { ...started, proxied, secure };
    } catch (err) {
      if (!(picked && attempt === 1 && err.bindConflict)) throw err;
      log('a picked port was taken meanwhile: retrying once with new free ports');
      const free = await pick();
      if (wantPort == null) port = free.shift();
      if (wantCPort == null) controllerPort = free.shift();
    }
  }
}

async function launch({ lib, log4jConf, p, port, controllerPort, log, timeoutMs, heap, jvmArgs }) {
  // the broker's output is appended, so that a restart's log follows the previous one; readiness is judged
  // from the offset where this start begins
  const startOffset = exists(p.logFile) ? fs.statSync(p.logFile).size : 0;
  const fd = fs.openSync(p.logFile, 'a');
  fs.writeSync(
    fd,
    `\n===== walbox: starting Kafka ${KAFKA_VERSION} on 127.0.0.1:${port} (controller ${controllerPort}) at ${new Date().toISOString()} =====\n`,
  );
  const args = [
    ...heap.split(/\s+/).filter(Boolean),
    ...JVM_FLAGS,
    ...jvmArgs,
    `-Dlog4j2.configurationFile=${log4jConf}`,
    `-Dkafka.logs.dir=${p.dir}`,
    '-cp',
    path.join(lib, '*'),
    'kafka.Kafka',
    p.props,
  ];
  const t0 = Date.now();
  let child;
  try {
    child = spawn(javaBin(), args, { cwd: p.dir, detached: true, stdio: ['ignore', fd, fd] });
  } finally {
    fs.closeSync(fd);
  }
  let exited = null;
  let spawnError = null;
  child.on('exit', (code, signal) => {
    exited = { code, signal };
  });
  child.on('error', (err) => {
    spawnError = err;
  });
  child.unref();
  const pid = child.pid;
  if (pid) await fsp.writeFile(p.pidFile, `${pid}\n`);
  log(`started broker pid ${pid} (log: ${p.logFile})`);

  const fail = async (why) => {
    let text = '';
    try {
      const all = fs.readFileSync(p.logFile);
      text = all.subarray(Math.min(startOffset, all.length)).toString('utf8');
    } catch {
      /* no log */
    }
    const causes = causeLines(text);
    log(
      `Kafka did not become ready: ${why}\n` +
        (causes ? `--- errors in ${p.logFile} ---\n${causes}\n` : '') +
        `--- last 60 lines of ${p.logFile} ---\n${lastLines(text, 60)}\n---`,
    );
    if (pid) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        /* gone already */
      }
      await waitGone(pid, null, 10000);
    }
    await fsp.rm(p.pidFile, { force: true });
    const err = new Error(`startKafka: ${why} (see ${p.logFile})`);
    err.bindConflict = /BindException|failed to bind|Address already in use/.test(text);
    throw err;
  };

  const deadline = t0 + timeoutMs;
  let sawLine = false;
  let readFrom = startOffset;
  let carry = '';
  for (;;) {
    if (spawnError) await fail(`could not run java: ${spawnError.message}`);
    if (exited) await fail(`broker exited (${exited.code ?? exited.signal})`);
    if (!sawLine) {
      const size = fs.statSync(p.logFile).size;
      if (size > readFrom) {
        const fh = await fsp.open(p.logFile, 'r');
        try {
          const buf = Buffer.alloc(size - readFrom);
          await fh.read(buf, 0, buf.length, readFrom);
          readFrom = size;
          const chunk = carry + buf.toString('utf8');
          sawLine = chunk.includes(READY_LINE);
          carry = chunk.slice(-READY_LINE.length);
        } finally {
          await fh.close();
        }
      }
    }
    if (sawLine && (await tcpAccepts(port))) break;
    if (Date.now() >= deadline) {
      await fail(
        `timed out after ${timeoutMs} ms (${sawLine ? 'port not accepting' : `no "${READY_LINE}" line`})`,
      );
    }
    await sleep(100);
  }
  log(`Kafka ${KAFKA_VERSION} ready on 127.0.0.1:${port} in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  return { pid, port, controllerPort, brokers: `127.0.0.1:${port}`, runDir: p.dir, logFile: p.logFile };
}
