import { randomBytes } from 'node:crypto';
import { createServer } from 'node:net';

/** The private PostgreSQL of the test stack. A test that needs it fails loudly when it is missing. */
export function requireDatabaseUrl(): string {
  const url = process.env['TEST_DATABASE_URL'];
  if (url === undefined || url === '') {
    throw new Error('TEST_DATABASE_URL is not set: run the tests with `npm test`, which starts PostgreSQL');
  }
  return url;
}

/** The Kafka broker(s) of the test stack, comma-separated. */
export function requireKafkaBrokers(): string[] {
  const brokers = process.env['TEST_KAFKA_BROKERS'];
  if (brokers === undefined || brokers === '') {
    throw new Error('TEST_KAFKA_BROKERS is not set: run the tests with `npm test`, which starts Kafka');
  }
  return brokers.split(',');
}

/** A name no other test uses: lower-case, valid as identifier, slot and topic name. */
export function uniqueName(prefix: string): string {
  return `${prefix}_${randomBytes(5).toString('hex')}`;
}

/** A loopback port with nothing listening on it now. */
export async function findFreePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  return typeof address === 'object' && address !== null ? address.port : 0;
}
