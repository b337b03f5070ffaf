import pg from 'pg';

import { ConfigError, DatabaseError, PreconditionError } from '../errors.js';
import { describeDatabase } from './describeDatabase.js';
import { SQLSTATE, errorCodeOf, isTransientConnectionError } from './sqlState.js';

export interface ConnectDatabaseOptions {
  readonly databaseUrl: string;
  /** How long to keep retrying a server that cannot be reached yet (SPEC: fail fast at startup). */
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
      connectionString: options.databaseUrl,
      application_name: options.applicationName ?? 'walbox',
      connectionTimeoutMillis: Math.min(remaining, MAX_CONNECT_TIMEOUT_MS),
      keepAlive: true,
    });
    // An idle client's socket error would otherwise be an uncaught 'error' event; the next query reports it.
    client.on('error', () => undefined);
    try {
      await client.connect();
      return client;
    } catch (thrown) {
      await client.end().catch(() => undefined);
      const error = classifyConnectError(thrown, where);
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

function classifyConnectError(
  thrown: unknown,
  where: string,
): DatabaseError | ConfigError | PreconditionError {
  const code = errorCodeOf(thrown);
  const reason = reasonOf(thrown);
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
