// Starts and stops the local stack (a private PostgreSQL and a real Kafka broker) and records it in a state file.
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

import { fetchKafka, findFreePorts, startKafka, stopKafka } from './kafka.mjs';
import { startPostgres, stopPostgres } from './postgres.mjs';
import { STACK_TOOLS, ensureTools } from './ensureTools.mjs';

export { findFreePort } from './kafka.mjs';

export const ROOT = resolve(import.meta.dirname, '..', '..');

export function statePath(stateDir) {
  return join(stateDir, 'state.json');
}

export function readState(stateDir) {
  const file = statePath(stateDir);
  return existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : undefined;
}

/** Starts PostgreSQL and Kafka side by side; on any failure stops what started and rethrows. */
export async function startStack({ stateDir, log = console.error }) {
  if (readState(stateDir) !== undefined) {
    throw new Error(`a stack is already recorded in ${stateDir}: run \`npm run stack -- down\` first`);
  }
  ensureTools(STACK_TOOLS, log);
  mkdirSync(stateDir, { recursive: true });
  const started = Date.now();
  await fetchKafka({ root: ROOT, log });
  // Picked together: three picks in a row can get the same port back from the OS (seen in CI).
  const [pgPort, kafkaPort, controllerPort] = await findFreePorts(3);
  const kafkaRunDir = join(stateDir, 'kafka');
  const kafkaStarted = Date.now();
  // Kafka boots in its own JVM while PostgreSQL initialises (startPostgres blocks this thread).
  const kafkaPromise = startKafka({
    root: ROOT,
    runDir: kafkaRunDir,
    port: kafkaPort,
    controllerPort,
    log,
  }).then((kafka) => ({ ...kafka, seconds: (Date.now() - kafkaStarted) / 1000 }));
  let postgres;
  try {
    const pgStarted = Date.now();
    postgres = { ...startPostgres({ port: pgPort, log }), seconds: (Date.now() - pgStarted) / 1000 };
  } catch (error) {
    await kafkaPromise.then(
      () => stopKafka({ runDir: kafkaRunDir }),
      () => undefined,
    );
    rmSync(stateDir, { recursive: true, force: true });
    throw error;
  }
  let kafka;
  try {
    kafka = { ...(await kafkaPromise), runDir: kafkaRunDir };
  } catch (error) {
    stopPostgres(postgres);
    rmSync(stateDir, { recursive: true, force: true });
    throw error;
  }
  const state = { postgres, kafka, seconds: (Date.now() - started) / 1000 };
  writeFileSync(statePath(stateDir), JSON.stringify(state, null, 2));
  log(
    `stack: PostgreSQL on 127.0.0.1:${postgres.port} (${postgres.seconds.toFixed(1)}s), ` +
      `Kafka on ${kafka.brokers} and SASL_SSL ${kafka.secure.brokers} (${kafka.seconds.toFixed(1)}s); total ${state.seconds.toFixed(1)}s`,
  );
  return state;
}

export async function stopStack({ stateDir, log = console.error }) {
  const state = readState(stateDir);
  if (state === undefined) return;
  const problems = [];
  try {
    await stopKafka({ runDir: state.kafka.runDir });
  } catch (error) {
    problems.push(`kafka: ${error.message}`);
  }
  try {
    stopPostgres(state.postgres);
  } catch (error) {
    problems.push(`postgres: ${error.message}`);
  }
  rmSync(stateDir, { recursive: true, force: true });
  if (problems.length > 0) throw new Error(`stack: stop failed: ${problems.join('; ')}`);
  log('stack: stopped');
}

/** The variables the tests (TEST_*) and the CLI (DATABASE_URL, KAFKA_BROKERS) read. */
export function stackEnv(state, stateDir) {
  return {
    TEST_DATABASE_URL: state.postgres.url,
    TEST_KAFKA_BROKERS: state.kafka.brokers,
    TEST_STACK_STATE: statePath(stateDir),
    // the SASL_SSL listener and the test CA (secure-connection tests)
    TEST_KAFKA_SASL_SSL_BROKERS: state.kafka.secure.brokers,
    TEST_TLS_DIR: state.kafka.secure.dir,
    DATABASE_URL: state.postgres.url,
    KAFKA_BROKERS: state.kafka.brokers,
  };
}
