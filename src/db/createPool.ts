import pg from 'pg';

import type { RelayLogger } from '../core/ports.js';
import { toPgClientConfig } from './pgClientConfig.js';

/**
 * A pool for the relay's own queries. Timestamps are read as text in one DateStyle and time zone everywhere, so
 * both modes format created_at the same way. The pool reconnects by itself after an outage; an idle client's
 * error is only logged (the next query reports it).
 */
export function createPool(
  databaseUrl: string,
  options: {
    applicationName: string;
    max: number;
    logger: RelayLogger;
    /** Give up on connecting and on each query after this long (probes that must not hang); none by default. */
    timeoutMs?: number;
  },
): pg.Pool {
  const pool = new pg.Pool({
    ...toPgClientConfig(databaseUrl),
    application_name: options.applicationName,
    max: options.max,
    options: '-c DateStyle=ISO -c TimeZone=UTC',
    ...(options.timeoutMs === undefined
      ? {}
      : { connectionTimeoutMillis: options.timeoutMs, query_timeout: options.timeoutMs, keepAlive: true }),
  });
  pool.on('error', (error) => options.logger.debug({ err: error }, 'idle database connection failed'));
  return pool;
}
