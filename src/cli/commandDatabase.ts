import type pg from 'pg';

import type { RelayConfig } from '../config/relayConfig.js';
import { connectDatabase } from '../db/connectDatabase.js';

/** Connects (failing fast, like the relay), runs `body`, and always closes the connection. */
export async function withCommandDatabase<T>(
  config: RelayConfig,
  command: string,
  body: (client: pg.ClientBase) => Promise<T>,
): Promise<T> {
  const client = await connectDatabase({
    databaseUrl: config.databaseUrl ?? '',
    startupTimeoutMs: config.startupTimeoutMs,
    applicationName: `walbox ${command}`,
  });
  try {
    // Timestamps as text in the one format the relay reads too (createPool sets the same).
    await client.query(`SET DateStyle = ISO; SET TimeZone = 'UTC'`);
    return await body(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}
