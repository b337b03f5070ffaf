import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { PgoutputMessage } from '../../../../src/source/wal/pgoutput/pgoutputMessage.js';
import { WalSource, type WalSourceOptions } from '../../../../src/source/wal/walSource.js';
import { DEFAULT_COLUMNS } from '../../../../src/outbox/outboxColumns.js';

/**
 * WalSource's handling of decoded messages, without a server: a real stream cannot be made to send a message type
 * PostgreSQL does not have. The constructor is private (start() connects); it does not connect by itself.
 */
function createUnstartedSource(): { source: WalSource; receive: (message: PgoutputMessage) => void } {
  const options: WalSourceOptions = {
    databaseUrl: 'postgres://user@127.0.0.1:1/db',
    slot: 'walbox',
    publication: 'walbox',
    applicationName: 'walbox',
    schema: 'public',
    table: 'outbox_events',
    columns: DEFAULT_COLUMNS,
    startLsn: 0n,
    statusIntervalMs: 10_000,
    receiveTimeoutMs: 30_000,
    highWaterItems: 100,
    highWaterBytes: 1_000_000,
    logger: { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined },
    persistPosition: () => Promise.resolve(),
  };
  const Unstarted = WalSource as unknown as new (o: WalSourceOptions) => WalSource;
  const source = new Unstarted(options);
  const internals = source as unknown as { receive(message: PgoutputMessage): void };
  return { source, receive: (message) => internals.receive(message) };
}

describe('WalSource', () => {
  it('stops with a clear error on a message type it does not know, instead of skipping it', async () => {
    const { source, receive } = createUnstartedSource();
    receive({ tag: 'unknown', byte: 0x5a });
    await assert.rejects(source.next(), /unknown pgoutput message type 0x5a/);
  });
});
