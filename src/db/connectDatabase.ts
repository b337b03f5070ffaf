import pg from 'pg';

import { ConfigError, DatabaseError, PreconditionError } from '../errors.js';
import { describeDatabase } from './describeDatabase.js';
import { CERTIFICATE_ERROR_CODES, SQLSTATE, errorCodeOf, isTransientConnectionError } from './sqlState.js';
import {
  fallbackTlsFor,
  readPgTlsSettings,
  recordNegotiatedTls,
  toPgClientConfig,
} from './pgClientConfig.js';

export interface ConnectDatabaseOptions {
  readonly databaseUrl: string;
  /** How long to keep retrying a server that cannot be reached yet (fail fast at startup). */
  readonly startupTimeoutMs: number;
  readonly applicationName?: string;
  readonly onRetry?: (error: Error, attempt: number, delayMs: number) => void;
}

const FIRST_RETRY_DELAY_MS = 250;
const MAX_RETRY_DELAY_MS = 2_000;
const MAX_CONNECT_TIMEOUT_MS = 10_000;

/**
 * Connects a pg.Client, retrying unreachable or starting servers until the startup timeout. Wrong credentials
 * and a missing database fail at once: retrying cannot fix them.
 */
export async function connectDatabase(options: ConnectDatabaseOptions): Promise<pg.Client> {
  const where = describeDatabase(options.databaseUrl);
  const deadline = Date.now() + options.startupTimeoutMs;
  let delay = FIRST_RETRY_DELAY_MS;
  for (let attempt = 1; ; attempt++) {
    const remaining = Math.max(deadline - Date.now(), 1);
    const client = new pg.Client({
      ...toPgClientConfig(options.databaseUrl),
      application_name: options.applicationName ?? 'walbox',
      connectionTimeoutMillis: Math.min(remaining, MAX_CONNECT_TIMEOUT_MS),
      keepAlive: true,
    });
    // An idle client's socket error would otherwise be an uncaught 'error' event; the next query reports it.
    client.on('error', () => undefined);
    try {
      await client.connect();
      recordTlsOutcome(options.databaseUrl, client);
      return client;
    } catch (thrown) {
      // Not awaited: after a failed connect, end() may never settle (the event loop then drained and the command
      // exited 0 with no output).
      void client.end().catch(() => undefined);
      const fallback = fallbackTlsFor(options.databaseUrl, thrown);
      if (fallback !== undefined && attempt === 1) {
        // sslmode=prefer on a server without TLS (or allow on one that insists): the other way, at once.
        recordNegotiatedTls(options.databaseUrl, fallback);
        continue;
      }
      const error = classifyConnectError(thrown, where, options.databaseUrl);
      if (!error.retriable || Date.now() + delay >= deadline) {
        if (!error.retriable) throw error;
        throw new DatabaseError(
          'DATABASE_UNAVAILABLE',
          `cannot reach PostgreSQL at ${where} within ${Math.round(options.startupTimeoutMs / 1000)}s ` +
            `(${reasonOf(thrown)}): check that the server runs and --database-url points at it`,
          { cause: thrown, retriable: true },
        );
      }
      options.onRetry?.(error, attempt, delay);
      await sleep(delay);
      delay = Math.min(delay * 2, MAX_RETRY_DELAY_MS);
    }
  }
}

function recordTlsOutcome(databaseUrl: string, client: pg.Client): void {
  const { mode } = readPgTlsSettings(databaseUrl);
  if (mode !== 'prefer' && mode !== 'allow') return;
  const stream = (client as unknown as { connection?: { stream?: { encrypted?: boolean } } }).connection
    ?.stream;
  recordNegotiatedTls(databaseUrl, stream?.encrypted === true);
}

function classifyConnectError(
  thrown: unknown,
  where: string,
  databaseUrl: string,
): DatabaseError | ConfigError | PreconditionError {
  const code = errorCodeOf(thrown);
  const reason = reasonOf(thrown);
  const nodeCode = (thrown as { code?: unknown } | null)?.code;
  if (typeof nodeCode === 'string' && CERTIFICATE_ERROR_CODES.has(nodeCode)) {
    const fix =
      nodeCode === 'ERR_TLS_CERT_ALTNAME_INVALID'
        ? 'connect by a host name the certificate lists, or use sslmode=verify-ca to skip the host-name check'
        : 'set sslrootcert in --database-url to the CA that signed the server certificate';
    return new ConfigError(
      `PostgreSQL at ${where}: the server certificate is not trusted (${reason}): ${fix}`,
      {
        cause: thrown,
      },
    );
  }
  if (reason.includes('does not support SSL')) {
    const { mode } = readPgTlsSettings(databaseUrl);
    return new ConfigError(
      `PostgreSQL at ${where} does not accept TLS, which sslmode=${mode} requires: enable ssl on the server ` +
        'or change sslmode in --database-url',
      { cause: thrown },
    );
  }
  if (code === SQLSTATE.INVALID_AUTHORIZATION && reason.includes('no encryption')) {
    return new ConfigError(
      `PostgreSQL at ${where} accepts this login only over TLS (${reason}): set sslmode=verify-full ` +
        '(with sslrootcert) or require in --database-url',
      { cause: thrown },
    );
  }
  if (code === SQLSTATE.INVALID_PASSWORD || code === SQLSTATE.INVALID_AUTHORIZATION) {
    return new ConfigError(
      `PostgreSQL at ${where} refused the login (${reason}): fix the user or password in --database-url, ` +
        'PGPASSWORD or WALBOX_DATABASE_URL_FILE',
      { cause: thrown },
    );
  }
  if (code === SQLSTATE.INVALID_CATALOG_NAME) {
    return new PreconditionError(`${reason} on ${where}: create it or fix --database-url`, { cause: thrown });
  }
  return new DatabaseError('DATABASE_UNAVAILABLE', `cannot connect to PostgreSQL at ${where}: ${reason}`, {
    cause: thrown,
    retriable: isTransientConnectionError(thrown),
  });
}

function reasonOf(thrown: unknown): string {
  if (thrown instanceof AggregateError && thrown.errors.length > 0) {
    return thrown.errors.map((e: unknown) => (e instanceof Error ? e.message : String(e))).join(', ');
  }
  return thrown instanceof Error ? thrown.message : String(thrown);
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
