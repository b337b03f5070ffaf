import pg from 'pg';

import { requireDatabaseUrl } from './testEnv.js';

/** Runs `body` with a connected client of the test database and always closes it. */
export async function withClient<T>(
  body: (client: pg.Client) => Promise<T>,
  url = requireDatabaseUrl(),
): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  client.on('error', () => undefined);
  await client.connect();
  try {
    return await body(client);
  } finally {
    await client.end();
  }
}

/** Drops a test schema and a publication, ignoring what does not exist. */
export async function dropSchema(
  schema: string,
  publication?: string,
  url = requireDatabaseUrl(),
): Promise<void> {
  await withClient(async (client) => {
    if (publication !== undefined)
      await client.query(`DROP PUBLICATION IF EXISTS ${pg.escapeIdentifier(publication)}`);
    await client.query(`DROP SCHEMA IF EXISTS ${pg.escapeIdentifier(schema)} CASCADE`);
  }, url);
}
