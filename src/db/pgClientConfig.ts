import { readFileSync } from 'node:fs';
import type { ConnectionOptions, TLSSocket } from 'node:tls';

import type pg from 'pg';

import { isSslMode, type SslMode } from '../config/resolveDatabaseUrl.js';
import { ConfigError } from '../errors.js';

/**
 * Parameters node-postgres would read from the URL with its own meanings (its `sslmode=require` verifies the
 * certificate, unlike libpq's). They are taken out of the URL and turned into an explicit `ssl` option here.
 */
const TLS_PARAMS = ['sslmode', 'sslrootcert', 'sslcert', 'sslkey', 'sslpassword', 'ssl', 'uselibpqcompat'];

export interface PgTlsSettings {
  readonly mode: SslMode;
  /** sslmode was given (URL or PGSSLMODE); unset means libpq's default, prefer. */
  readonly explicit: boolean;
  readonly rootCert: string | undefined;
  readonly cert: string | undefined;
  readonly key: string | undefined;
  /** What is checked once TLS is up. */
  readonly verify: 'none' | 'ca' | 'full';
}

/** host:port → whether TLS worked there: how sslmode=prefer/allow negotiated on the first connection. */
const negotiated = new Map<string, boolean>();

/** The sslmode and files of a database URL, with libpq's meanings. */
export function readPgTlsSettings(databaseUrl: string): PgTlsSettings {
  const params = new URL(databaseUrl).searchParams;
  const given = params.get('sslmode');
  const mode: SslMode = given !== null && isSslMode(given) ? given : 'prefer';
  const rootCert = params.get('sslrootcert') ?? undefined;
  // libpq: "if a root CA file exists, sslmode=require behaves like verify-ca".
  const verify =
    mode === 'verify-full'
      ? 'full'
      : mode === 'verify-ca' || (mode === 'require' && rootCert !== undefined)
        ? 'ca'
        : 'none';
  return {
    mode,
    explicit: given !== null,
    rootCert,
    cert: params.get('sslcert') ?? undefined,
    key: params.get('sslkey') ?? undefined,
    verify,
  };
}

/**
 * The node-postgres config of a database URL, with `ssl` built from libpq's sslmode (both the pool and the
 * replication connection use it). Files are read here, at each use, so that rotated certificates are picked up.
 */
export function toPgClientConfig(databaseUrl: string): pg.ClientConfig {
  const url = new URL(databaseUrl);
  const settings = readPgTlsSettings(databaseUrl);
  const key = serverKey(url);
  for (const param of TLS_PARAMS) url.searchParams.delete(param);
  return { connectionString: url.toString(), ssl: toSslOption(settings, negotiated.get(key)) };
}

/** Records what sslmode=prefer/allow found on this server, so that the pool and replication do the same. */
export function recordNegotiatedTls(databaseUrl: string, tls: boolean): void {
  negotiated.set(serverKey(new URL(databaseUrl)), tls);
}

/** Whether a connect failure means "try the other way" under prefer (no TLS offered) or allow (TLS required). */
export function fallbackTlsFor(databaseUrl: string, error: unknown): boolean | undefined {
  const { mode } = readPgTlsSettings(databaseUrl);
  const message = error instanceof Error ? error.message : '';
  if (mode === 'prefer' && message.includes('does not support SSL')) return false;
  if (mode === 'allow' && /no encryption/.test(message)) return true;
  return undefined;
}

/** One line on what protects a connected client: for doctor and the startup log. */
export function describePgTls(client: pg.ClientBase, databaseUrl: string): string {
  const settings = readPgTlsSettings(databaseUrl);
  const socket = (client as unknown as ClientInternals).connection?.stream;
  const mode = `sslmode=${settings.mode}${settings.explicit ? '' : ' (default)'}`;
  if (socket === undefined || socket.encrypted !== true) return `not encrypted (${mode})`;
  const checked =
    settings.verify === 'full'
      ? 'certificate verified against ' + (settings.rootCert ?? 'the system CAs') + ', host name checked'
      : settings.verify === 'ca'
        ? 'certificate verified against ' +
          (settings.rootCert ?? 'the system CAs') +
          ', host name not checked'
        : 'certificate NOT verified';
  const client_ = settings.cert === undefined ? '' : `, client certificate ${settings.cert}`;
  return `${socket.getProtocol?.() ?? 'TLS'}, ${checked}${client_} (${mode})`;
}

/** The warning an unverified or optional encryption deserves, if any. */
export function warnAboutPgTls(client: pg.ClientBase, databaseUrl: string): string | undefined {
  const settings = readPgTlsSettings(databaseUrl);
  const encrypted = (client as unknown as ClientInternals).connection?.stream?.encrypted === true;
  if (encrypted && settings.verify === 'none') {
    return (
      `the PostgreSQL connection is encrypted but the server's certificate is not verified (sslmode=${settings.mode}): ` +
      'use sslmode=verify-full with sslrootcert=<CA file>'
    );
  }
  if (!encrypted && settings.explicit && settings.mode !== 'disable') {
    return `the PostgreSQL server offers no TLS, so the connection is not encrypted (sslmode=${settings.mode})`;
  }
  return undefined;
}

interface ClientInternals {
  connection?: { stream?: Partial<Pick<TLSSocket, 'encrypted' | 'getProtocol'>> };
}

function serverKey(url: URL): string {
  return `${url.hostname || (url.searchParams.get('host') ?? '')}:${url.port || (url.searchParams.get('port') ?? '')}`;
}

function toSslOption(settings: PgTlsSettings, negotiatedTls: boolean | undefined): false | ConnectionOptions {
  switch (settings.mode) {
    case 'disable':
      return false;
    case 'allow':
      return negotiatedTls === true ? { rejectUnauthorized: false } : false;
    case 'prefer':
      return negotiatedTls === false ? false : { rejectUnauthorized: false };
    default:
      break;
  }
  const files: ConnectionOptions = {};
  if (settings.cert !== undefined) files.cert = readTlsFile('sslcert', settings.cert);
  if (settings.key !== undefined) files.key = readTlsFile('sslkey', settings.key);
  if (settings.verify === 'none') return { ...files, rejectUnauthorized: false };
  const ca =
    settings.rootCert === undefined || settings.rootCert === 'system'
      ? {}
      : { ca: readTlsFile('sslrootcert', settings.rootCert) };
  const identity = settings.verify === 'ca' ? { checkServerIdentity: () => undefined } : {};
  return { ...files, ...ca, ...identity, rejectUnauthorized: true };
}

function readTlsFile(param: string, path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (cause) {
    throw new ConfigError(
      `cannot read ${param} ${path} (--database-url): ${cause instanceof Error ? cause.message : String(cause)}`,
      { cause },
    );
  }
}
