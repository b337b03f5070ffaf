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
} from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';

export const PG_PASSWORD = 'walbox-test-secret';
export const PG_DATABASE = 'walbox';

const isRoot = () => process.getuid?.() === 0;

/** The newest /usr/lib/postgresql/<v>/bin; installs Debian's postgresql package when none exists and we are root. */
export function findPgBin({ log = console.error } = {}) {
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
export function startPostgres({ port, log = console.error, settings = {}, tls, hbaLines = [] }) {
  const bin = findPgBin({ log });
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
  const handle = { bin, user, baseDir, dataDir, logFile, port };
  pgCtl(handle, ['start', '-w', '-t', '60', '-l', logFile]);
  runAs(user, join(bin, 'createdb'), ['-h', baseDir, '-p', String(port), '-U', 'postgres', PG_DATABASE]);
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
