#!/usr/bin/env node
// The test runner behind `npm test`: compile, start the stack unless TEST_DATABASE_URL and TEST_KAFKA_BROKERS
// point at running services, run one `node --test` over the compiled tests, stop the stack.
// Flags: --unit (unit tests only, no services), a path filter (e.g. `node scripts/test.mjs migrate`).
import { spawn, spawnSync } from 'node:child_process';
import { readdirSync, rmSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

import { ROOT, stackEnv, startStack, stopStack } from './stack/stack.mjs';

const args = process.argv.slice(2);
const unitOnly = args.includes('--unit');
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

const testsStarted = Date.now();
const child = spawn(process.execPath, ['--test', '--test-reporter=spec', '--test-concurrency=1', ...files], {
  cwd: ROOT,
  env,
  stdio: 'inherit',
});
const code = await new Promise((resolveCode) => child.on('exit', (c, s) => resolveCode(c ?? (s ? 1 : 0))));
await cleanUp();
log(
  `tests took ${((Date.now() - testsStarted) / 1000).toFixed(1)}s; whole run ${((Date.now() - started) / 1000).toFixed(1)}s`,
);
process.exit(code);
