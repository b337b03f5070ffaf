#!/usr/bin/env node
// The test runner behind `npm test`: compile, start the stack unless TEST_DATABASE_URL and TEST_KAFKA_BROKERS
// point at running services, run one `node --test` over the compiled tests on the main PostgreSQL version
// (TEST_PG_VERSION, default 15), then the compatibility subset on each other supported version (the same broker,
// a private cluster per version), then the unit tests and WAL mode end to end on each other supported Node.js
// release (fetched from the npm registry), stop the stack.
// The parity test against Debezium (test/parity/, Kafka Connect + Debezium from Maven Central into .cache/connect)
// runs as its own phase right after the main run.
// Flags: --unit (unit tests only, no services), --pg=16,17 (the versions of the subset; --pg= for none),
// --node=24 (the other Node.js releases; --node= for none),
// a path filter (e.g. `node scripts/test.mjs migrate`).
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';

import { TEST_TOOLS, ensureTools } from './stack/ensureTools.mjs';
import { fetchNode } from './stack/nodeRuntime.mjs';
import { PG_VERSIONS, defaultPgVersion, startPostgres, stopPostgres } from './stack/postgres.mjs';
import { ROOT, findFreePort, stackEnv, startStack, stopStack } from './stack/stack.mjs';

/**
 * What every supported version runs besides the main one: decoding, migrations, the outbox store, both modes
 * end to end, the preflight refusals, a partitioned outbox, and the primary failover scenario of that version.
 */
const COMPATIBILITY_SUBSET = [
  'integration/pgoutputSlot.pg.test.js',
  'integration/migrate.pg.test.js',
  'integration/pgOutboxStore.pg.test.js',
  'e2e/walMode.test.js',
  'e2e/pollMode.test.js',
  'e2e/walPreflight.test.js',
  // seq differs by version on a partitioned table (identity columns shared by partitions only from 17 on)
  'e2e/partitionedOutbox.test.js',
  'faults/failover.test.js',
];

/** What the other supported Node.js releases run: the unit tests and WAL mode end to end. */
const NODE_SUBSET = ['unit/', 'e2e/walMode.test.js'];
const NODE_VERSIONS = ['24'];

const args = process.argv.slice(2);
const unitOnly = args.includes('--unit');
const mainVersion = defaultPgVersion();
const pgFlag = args.find((a) => a.startsWith('--pg='));
const otherVersions = (
  pgFlag === undefined ? PG_VERSIONS : pgFlag.slice('--pg='.length).split(',').filter(Boolean)
).filter((v) => v !== mainVersion);
for (const version of otherVersions) {
  if (!PG_VERSIONS.includes(version)) {
    console.error(`test: --pg=${version}: supported versions are ${PG_VERSIONS.join(', ')}`);
    process.exit(2);
  }
}
const nodeFlag = args.find((a) => a.startsWith('--node='));
const otherNodes = (
  nodeFlag === undefined ? NODE_VERSIONS : nodeFlag.slice('--node='.length).split(',').filter(Boolean)
).filter((v) => v !== process.versions.node.split('.')[0]);
const filters = args.filter((a) => !a.startsWith('--'));
const BUILD = join(ROOT, 'build');
const STATE_DIR = join(ROOT, '.stack', `test-${process.pid}`);
const started = Date.now();

function log(message) {
  console.error(`test: ${message}`);
}

function listTests(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return listTests(path);
    return name.endsWith('.test.js') ? [path] : [];
  });
}

rmSync(BUILD, { recursive: true, force: true });
const tsc = spawnSync(
  process.execPath,
  [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.test.json'],
  {
    cwd: ROOT,
    stdio: 'inherit',
  },
);
if (tsc.status !== 0) process.exit(tsc.status ?? 1);

let files = listTests(join(BUILD, 'test', unitOnly ? 'unit' : ''));
if (filters.length > 0) files = files.filter((f) => filters.some((p) => relative(BUILD, f).includes(p)));
if (files.length === 0) {
  log('no test files matched');
  process.exit(1);
}
const needsServices = files.some((f) => !relative(BUILD, f).startsWith(join('test', 'unit')));

let env = { ...process.env };
let ownStack = false;
if (needsServices) {
  try {
    ensureTools(TEST_TOOLS, log);
  } catch (error) {
    log(error.message);
    process.exit(1);
  }
  if (process.env.TEST_DATABASE_URL && process.env.TEST_KAFKA_BROKERS) {
    log('using the services in TEST_DATABASE_URL and TEST_KAFKA_BROKERS');
  } else {
    const state = await startStack({ stateDir: STATE_DIR, log }).catch((error) => {
      log(`could not start the test stack: ${error.message}`);
      process.exit(1);
    });
    ownStack = true;
    // Only TEST_*: the CLI's own DATABASE_URL / KAFKA_BROKERS fallbacks stay unset, so tests pass them explicitly.
    const all = stackEnv(state, STATE_DIR);
    env = { ...env, TEST_DATABASE_URL: all.TEST_DATABASE_URL, TEST_KAFKA_BROKERS: all.TEST_KAFKA_BROKERS };
    env.TEST_STACK_STATE = all.TEST_STACK_STATE;
    env.TEST_KAFKA_SASL_SSL_BROKERS = all.TEST_KAFKA_SASL_SSL_BROKERS;
    env.TEST_TLS_DIR = all.TEST_TLS_DIR;
  }
}

let stopping;
async function cleanUp() {
  stopping ??= ownStack
    ? stopStack({ stateDir: STATE_DIR, log }).catch((e) => log(e.message))
    : Promise.resolve();
  await stopping;
}
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    void cleanUp().then(() => process.exit(130));
  });
}

function runTests(testFiles, testEnv, nodeBin = process.execPath) {
  const child = spawn(nodeBin, ['--test', '--test-reporter=spec', '--test-concurrency=1', ...testFiles], {
    cwd: ROOT,
    env: testEnv,
    stdio: 'inherit',
  });
  return new Promise((resolveCode) => child.on('exit', (c, s) => resolveCode(c ?? (s ? 1 : 0))));
}

/** The compatibility subset on PostgreSQL `version`: its own cluster, the stack's broker, a state file for both. */
async function runOnVersion(version, subset) {
  if (!env.TEST_STACK_STATE) {
    log(
      `PostgreSQL ${version}: NOT RUN: the subset needs TEST_STACK_STATE (a stack started by npm run stack)`,
    );
    return 1;
  }
  const versionStarted = Date.now();
  const postgres = startPostgres({ port: await findFreePort(), log, version });
  const stateDir = join(STATE_DIR, `pg${version}`);
  try {
    mkdirSync(stateDir, { recursive: true });
    const state = { ...JSON.parse(readFileSync(env.TEST_STACK_STATE, 'utf8')), postgres };
    writeFileSync(join(stateDir, 'state.json'), JSON.stringify(state, null, 2));
    log(`PostgreSQL ${version}: ${subset.length} files of the compatibility subset`);
    const code = await runTests(subset, {
      ...env,
      TEST_PG_VERSION: version,
      TEST_DATABASE_URL: postgres.url,
      TEST_STACK_STATE: join(stateDir, 'state.json'),
    });
    log(
      `PostgreSQL ${version}: ${code === 0 ? 'passed' : `FAILED (exit ${code})`} in ${((Date.now() - versionStarted) / 1000).toFixed(1)}s`,
    );
    return code;
  } finally {
    stopPostgres(postgres);
    rmSync(stateDir, { recursive: true, force: true });
  }
}

const testsStarted = Date.now();
const isParity = (f) => relative(BUILD, f).startsWith(join('test', 'parity'));
const mainFiles = files.filter((f) => !isParity(f));
const parityFiles = files.filter(isParity);
let code = 0;
if (mainFiles.length > 0) {
  log(`PostgreSQL ${mainVersion}: ${mainFiles.length} files`);
  code = await runTests(mainFiles, { ...env, TEST_PG_VERSION: mainVersion });
}
if (parityFiles.length > 0) {
  // Debezium 3.4 on Kafka Connect next to walbox, on the same stack; the first run fetches the jars with mvn
  const parityStarted = Date.now();
  log(`Debezium parity: ${parityFiles.length} file(s), Kafka Connect + Debezium from .cache/connect`);
  const parityCode = await runTests(parityFiles, { ...env, TEST_PG_VERSION: mainVersion });
  log(
    `Debezium parity: ${parityCode === 0 ? 'passed' : `FAILED (exit ${parityCode})`} in ${((Date.now() - parityStarted) / 1000).toFixed(1)}s`,
  );
  if (code === 0) code = parityCode;
}
const subset = files.filter((f) => COMPATIBILITY_SUBSET.some((c) => relative(BUILD, f) === join('test', c)));
if (needsServices && subset.length > 0) {
  for (const version of otherVersions) {
    const versionCode = await runOnVersion(version, subset).catch((error) => {
      log(`PostgreSQL ${version}: could not run: ${error.message}`);
      return 1;
    });
    if (code === 0) code = versionCode;
  }
}
for (const major of otherNodes) {
  const nodeFiles = files.filter((f) =>
    NODE_SUBSET.some((n) => relative(BUILD, f).startsWith(join('test', n))),
  );
  if (nodeFiles.length === 0) continue;
  const nodeStarted = Date.now();
  let nodeCode;
  try {
    const nodeBin = fetchNode(major, { log });
    log(`Node ${major}: ${nodeFiles.length} files (unit tests, WAL mode end to end)`);
    nodeCode = await runTests(nodeFiles, { ...env, TEST_PG_VERSION: mainVersion }, nodeBin);
  } catch (error) {
    log(`Node ${major}: could not run: ${error.message}`);
    nodeCode = 1;
  }
  log(
    `Node ${major}: ${nodeCode === 0 ? 'passed' : `FAILED (exit ${nodeCode})`} in ${((Date.now() - nodeStarted) / 1000).toFixed(1)}s`,
  );
  if (code === 0) code = nodeCode;
}
await cleanUp();
log(
  `tests took ${((Date.now() - testsStarted) / 1000).toFixed(1)}s; whole run ${((Date.now() - started) / 1000).toFixed(1)}s`,
);
process.exit(code);
