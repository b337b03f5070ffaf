import type { Environment } from './readEnv.js';

/** libpq's sslmode values, with libpq's meanings (see src/db/pgClientConfig.ts). */
export const SSL_MODES = ['disable', 'allow', 'prefer', 'require', 'verify-ca', 'verify-full'] as const;
export type SslMode = (typeof SSL_MODES)[number];

/** The URL parameters libpq also reads from the environment when the URL leaves them out. */
const ENV_FALLBACKS = [
  ['sslmode', 'PGSSLMODE'],
  ['sslrootcert', 'PGSSLROOTCERT'],
  ['sslcert', 'PGSSLCERT'],
  ['sslkey', 'PGSSLKEY'],
] as const;

const FILE_PARAMS = ['sslrootcert', 'sslcert', 'sslkey'] as const;

export type DatabaseUrlResult = { ok: true; url: string } | { ok: false; problems: string[] };

export function isSslMode(value: string): value is SslMode {
  return (SSL_MODES as readonly string[]).includes(value);
}

/**
 * Validates what node-postgres would otherwise take silently (a port of "abc" made every command exit 0 with no
 * output) and folds libpq's PGSSL* variables into the URL, so that the pool and the replication connection read
 * one description. Problems name the parameter, never the URL (it may hold a password).
 */
export function resolveDatabaseUrl(
  text: string,
  env: Environment,
  checkFile: (path: string) => string | undefined,
): DatabaseUrlResult {
  const url = new URL(text);
  const problems: string[] = [];
  const port = url.searchParams.get('port');
  if (port !== null && !isPort(port))
    problems.push(`invalid port=${JSON.stringify(port)} in --database-url: must be 1 to 65535`);
  const envPort = env['PGPORT'];
  if (envPort !== undefined && envPort !== '' && !isPort(envPort)) {
    problems.push(`invalid PGPORT ${JSON.stringify(envPort)}: must be a port number from 1 to 65535`);
  }
  if (url.searchParams.has('ssl')) {
    problems.push(
      '--database-url has ssl=…, which libpq does not know: use sslmode=require, verify-ca or verify-full',
    );
  }
  let changed = false;
  for (const [param, variable] of ENV_FALLBACKS) {
    const fromEnv = env[variable];
    if (!url.searchParams.has(param) && fromEnv !== undefined && fromEnv !== '') {
      url.searchParams.set(param, fromEnv);
      changed = true;
    }
  }
  const mode = url.searchParams.get('sslmode');
  if (mode !== null && !isSslMode(mode)) {
    problems.push(
      `invalid sslmode=${JSON.stringify(mode)} in --database-url (or PGSSLMODE): use one of ${SSL_MODES.join(', ')}`,
    );
  }
  if ((mode === 'verify-ca' || mode === 'verify-full') && !url.searchParams.has('sslrootcert')) {
    const home = env['HOME'];
    const fallback = home === undefined ? undefined : `${home}/.postgresql/root.crt`;
    if (fallback !== undefined && checkFile(fallback) === undefined) {
      url.searchParams.set('sslrootcert', fallback);
      changed = true;
    } else {
      problems.push(
        `sslmode=${mode} needs sslrootcert=<CA file> in --database-url (or PGSSLROOTCERT, or ~/.postgresql/root.crt; ` +
          'sslrootcert=system trusts the system store)',
      );
    }
  }
  for (const param of FILE_PARAMS) {
    const path = url.searchParams.get(param);
    if (path === null || (param === 'sslrootcert' && path === 'system')) continue;
    const problem = checkFile(path);
    if (problem !== undefined) problems.push(`cannot read ${param} ${path} (--database-url): ${problem}`);
  }
  if (url.searchParams.has('sslcert') !== url.searchParams.has('sslkey')) {
    problems.push('--database-url has only one of sslcert and sslkey: a client certificate needs both');
  }
  if (problems.length > 0) return { ok: false, problems };
  // Unchanged URLs stay byte for byte as given (a round trip through URL may re-encode the password).
  return { ok: true, url: changed ? url.toString() : text };
}

function isPort(text: string): boolean {
  if (!/^\d{1,5}$/.test(text)) return false;
  const n = Number(text);
  return n >= 1 && n <= 65_535;
}
