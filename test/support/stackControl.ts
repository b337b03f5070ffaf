import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { withClient } from './testDatabase.js';
import { waitFor } from './waitFor.js';

/** The stack modules are plain ESM scripts (they run before anything is compiled); these are the parts we use. */
interface KafkaModule {
  stopKafka(options: { runDir: string; signal?: string }): Promise<unknown>;
  killKafka(options: { runDir: string }): Promise<unknown>;
  startKafka(options: {
    root: string;
    runDir: string;
    port: number;
    controllerPort: number;
    log?: (m: string) => void;
  }): Promise<unknown>;
}

interface PostgresModule {
  restartPostgres(handle: unknown, options?: { mode?: 'smart' | 'fast' | 'immediate' }): void;
  startPostgres(options: {
    port: number;
    settings?: Record<string, string>;
    log?: (m: string) => void;
    version?: string;
  }): PostgresHandle;
  startStandby(
    primary: PostgresHandle,
    options: { port: number; applicationName: string; settings?: Record<string, string> },
  ): PostgresHandle;
  promotePostgres(handle: PostgresHandle): void;
  defaultPgVersion(): string;
  stopPostgres(handle: unknown, options?: { mode?: string; remove?: boolean }): void;
  databaseUrl(port: number): string;
}

export interface PostgresHandle {
  readonly url: string;
  readonly port: number;
}

interface StackState {
  readonly postgres: unknown;
  readonly kafka: {
    readonly runDir: string;
    readonly port: number;
    readonly controllerPort: number;
    readonly proxied: BrokerProxiedListener;
  };
}

const ROOT = join(__dirname, '..', '..', '..');

function loadModule<T>(name: string): Promise<T> {
  // A variable specifier keeps TypeScript from resolving (and typing) the .mjs file; Node loads it as ESM.
  const specifier = join(ROOT, 'scripts', 'stack', name);
  return import(specifier) as Promise<T>;
}

/** The stack this test run started (scripts/test.mjs). Fault tests need it and fail loudly without it. */
function readStackState(): StackState {
  const path = process.env['TEST_STACK_STATE'];
  if (path === undefined || path === '') {
    throw new Error(
      'TEST_STACK_STATE is not set: this test stops and starts services, run it with `npm test`',
    );
  }
  return JSON.parse(readFileSync(path, 'utf8')) as StackState;
}

/** The broker's PROXIED listener: it advertises `advertisedPort`, where a test's proxy forwards to `port`. */
export interface BrokerProxiedListener {
  readonly port: number;
  readonly advertisedPort: number;
}

export function readBrokerProxiedListener(): BrokerProxiedListener {
  return readStackState().kafka.proxied;
}

/** The private cluster's server log (everything it logged so far). */
export function readPostgresLog(): string {
  const { postgres } = readStackState();
  const { logFile } = postgres as { logFile: string };
  return readFileSync(logFile, 'utf8');
}

/** A real stop of the broker process (SIGTERM, or SIGKILL with `kill`); its data directory stays. */
export async function stopBroker(options: { kill?: boolean } = {}): Promise<void> {
  const { kafka } = readStackState();
  const module = await loadModule<KafkaModule>('kafka.mjs');
  if (options.kill === true) await module.killKafka({ runDir: kafka.runDir });
  else await module.stopKafka({ runDir: kafka.runDir });
}

/** Starts the broker again on the same data directory and ports. */
export async function startBroker(): Promise<void> {
  const { kafka } = readStackState();
  const module = await loadModule<KafkaModule>('kafka.mjs');
  await module.startKafka({
    root: ROOT,
    runDir: kafka.runDir,
    port: kafka.port,
    controllerPort: kafka.controllerPort,
    log: () => undefined,
  });
}

/** pg_ctl restart of the private cluster (fast, or immediate = crash and recovery). */
export async function restartPostgres(mode: 'fast' | 'immediate' = 'fast'): Promise<void> {
  const { postgres } = readStackState();
  const module = await loadModule<PostgresModule>('postgres.mjs');
  module.restartPostgres(postgres, { mode });
}

/** A second, throwaway cluster with other settings (e.g. wal_level=replica); stop it with the returned function. */
export async function startExtraPostgres(
  settings: Record<string, string>,
): Promise<{ url: string; stop: () => Promise<void> }> {
  const module = await loadModule<PostgresModule>('postgres.mjs');
  const { findFreePort } = await loadModule<{ findFreePort: () => Promise<number> }>('stack.mjs');
  const handle = module.startPostgres({ port: await findFreePort(), settings, log: () => undefined });
  return {
    url: handle.url,
    stop: () => {
      module.stopPostgres(handle);
      return Promise.resolve();
    },
  };
}

/** The broker's SASL_SSL listener and the test CA (scripts/stack/tls.mjs): the secure-connection tests need both. */
export interface SecureStack {
  /** localhost:<port>: the certificate names `localhost` only, so 127.0.0.1:<port> is a host-name mismatch. */
  readonly brokers: string;
  readonly port: number;
  readonly caFile: string;
  /** A CA that signed nothing the stack serves. */
  readonly otherCaFile: string;
  readonly serverCert: string;
  readonly serverKey: string;
}

export function requireSecureStack(): SecureStack {
  const brokers = process.env['TEST_KAFKA_SASL_SSL_BROKERS'];
  const dir = process.env['TEST_TLS_DIR'];
  if (brokers === undefined || brokers === '' || dir === undefined || dir === '') {
    throw new Error(
      'TEST_KAFKA_SASL_SSL_BROKERS and TEST_TLS_DIR are not set: run the tests with `npm test`, which starts the ' +
        "broker's SASL_SSL listener and makes the test CA",
    );
  }
  return {
    brokers,
    port: Number(brokers.split(':').at(-1)),
    caFile: join(dir, 'ca.crt'),
    otherCaFile: join(dir, 'other-ca.crt'),
    serverCert: join(dir, 'server.crt'),
    serverKey: join(dir, 'server.key'),
  };
}

/** The SCRAM-SHA-512 and PLAIN users of the SASL_SSL listener (test-only secrets, scripts/stack/tls.mjs). */
export async function readSaslUsers(): Promise<{
  scram: { username: string; password: string };
  plain: { username: string; password: string };
}> {
  const module = await loadModule<{ SASL_USERS: Awaited<ReturnType<typeof readSaslUsers>> }>('tls.mjs');
  return module.SASL_USERS;
}

/**
 * A private cluster with ssl=on (the test CA's certificate for `localhost`) that rejects every TCP connection
 * without TLS (`hostnossl … reject`), so a test that gets through has really used TLS.
 */
export async function startTlsPostgres(): Promise<{
  port: number;
  password: string;
  stop: () => Promise<void>;
}> {
  const secure = requireSecureStack();
  const module = await loadModule<
    PostgresModule & {
      PG_PASSWORD: string;
      startPostgres(options: {
        port: number;
        log?: (m: string) => void;
        tls?: { certFile: string; keyFile: string };
        hbaLines?: string[];
      }): PostgresHandle;
    }
  >('postgres.mjs');
  const { findFreePort } = await loadModule<{ findFreePort: () => Promise<number> }>('stack.mjs');
  const handle = module.startPostgres({
    port: await findFreePort(),
    log: () => undefined,
    tls: { certFile: secure.serverCert, keyFile: secure.serverKey },
    hbaLines: ['hostnossl all all 0.0.0.0/0 reject', 'hostnossl all all ::/0 reject'],
  });
  return {
    port: handle.port,
    password: module.PG_PASSWORD,
    stop: () => {
      module.stopPostgres(handle);
      return Promise.resolve();
    },
  };
}

/** Changes (or restores) a SCRAM user's password on the running broker, through the admin API. */
export async function setScramPassword(username: string, password: string): Promise<void> {
  const { kafka } = readStackState();
  const module = await loadModule<{
    setScramPassword(options: {
      root: string;
      runDir: string;
      username: string;
      password: string;
      log?: (m: string) => void;
    }): Promise<void>;
  }>('kafka.mjs');
  await module.setScramPassword({
    root: ROOT,
    runDir: kafka.runDir,
    username,
    password,
    log: () => undefined,
  });
}

/** The broker's log so far (all starts in this run). */
export function readBrokerLog(): string {
  const { kafka } = readStackState();
  return readFileSync(join(kafka.runDir, 'broker.log'), 'utf8');
}

/**
 * A primary and a synchronous physical standby (PostgreSQL `version`, default TEST_PG_VERSION), the standby made from
 * a cold copy of the primary's data directory. From PostgreSQL 17 on the standby syncs failover slots
 * (sync_replication_slots, hot_standby_feedback, primary_slot_name, dbname in primary_conninfo) and the primary's
 * logical walsenders wait for it (synchronized_standby_slots).
 */
export interface ReplicatedPair {
  readonly version: string;
  readonly syncsSlots: boolean;
  readonly primary: PostgresHandle;
  readonly standby: PostgresHandle;
  /** pg_ctl stop -m immediate: a crash, nothing flushed or sent after it. */
  crashPrimary(): Promise<void>;
  /** pg_ctl promote -w: the standby accepts writes when it returns. */
  promoteStandby(): Promise<void>;
  stop(): Promise<void>;
}

const STANDBY_NAME = 'standby1';
const STANDBY_SLOT = 'standby1_slot';

export async function startReplicatedPair(): Promise<ReplicatedPair> {
  const module = await loadModule<PostgresModule>('postgres.mjs');
  const { findFreePort } = await loadModule<{ findFreePort: () => Promise<number> }>('stack.mjs');
  const version = module.defaultPgVersion();
  const syncsSlots = Number(version) >= 17;
  const primary = module.startPostgres({ port: await findFreePort(), version, log: () => undefined });
  let standby: PostgresHandle | undefined;
  try {
    await withClient(
      (client) => client.query('SELECT pg_create_physical_replication_slot($1)', [STANDBY_SLOT]),
      primary.url,
    );
    standby = module.startStandby(primary, {
      port: await findFreePort(),
      applicationName: STANDBY_NAME,
      settings: {
        primary_slot_name: `'${STANDBY_SLOT}'`,
        hot_standby_feedback: 'on',
        ...(syncsSlots ? { sync_replication_slots: 'on' } : {}),
      },
    });
    // Set after the copy: the standby, once promoted, must not wait for a standby of its own.
    await withClient(async (client) => {
      await client.query(`ALTER SYSTEM SET synchronous_standby_names = '${STANDBY_NAME}'`);
      if (syncsSlots) await client.query(`ALTER SYSTEM SET synchronized_standby_slots = '${STANDBY_SLOT}'`);
      await client.query('SELECT pg_reload_conf()');
    }, primary.url);
    await waitFor(
      () =>
        withClient(async (client) => {
          const { rows } = await client.query<{ state: string }>(
            'SELECT sync_state AS state FROM pg_stat_replication WHERE application_name = $1',
            [STANDBY_NAME],
          );
          return rows[0]?.state === 'sync';
        }, primary.url),
      { what: 'the standby streaming as a synchronous standby', timeoutMs: 60_000, intervalMs: 200 },
    );
  } catch (error) {
    if (standby !== undefined) module.stopPostgres(standby);
    module.stopPostgres(primary);
    throw error;
  }
  const started = standby;
  return {
    version,
    syncsSlots,
    primary,
    standby: started,
    crashPrimary: () => {
      module.stopPostgres(primary, { mode: 'immediate', remove: false });
      return Promise.resolve();
    },
    promoteStandby: () => {
      module.promotePostgres(started);
      return Promise.resolve();
    },
    stop: () => {
      module.stopPostgres(started, { mode: 'immediate' });
      module.stopPostgres(primary, { mode: 'immediate' });
      return Promise.resolve();
    },
  };
}
