import { toOutboxTable } from '../config/toOutboxTable.js';
import { createPool } from '../db/createPool.js';
import { notifyChannel } from '../outbox/outboxNames.js';
import { NotifyListener } from '../source/poll/notifyListener.js';
import { PollRelay } from '../source/poll/pollRelay.js';
import type { RelayContext } from './relayContext.js';
import { sleep } from './sleep.js';

/** Poll mode: the claim-publish-mark loop, woken by NOTIFY (when the trigger is installed) or the interval. */
export async function runPollRelay(context: RelayContext): Promise<void> {
  const { config, logger } = context;
  // Timeouts on every query: a half-open connection must fail (and be replaced), not hang the loop forever.
  const pool = createPool(context.databaseUrl, {
    applicationName: 'walbox poll',
    max: 2,
    logger,
    timeoutMs: config.databaseTimeoutMs,
  });
  const relay = new PollRelay(
    { pool, sink: context.sink, logger, observer: context.observer, sleep },
    {
      outbox: toOutboxTable(config),
      batchSize: config.batchSize,
      pollIntervalMs: config.pollIntervalMs,
      maxAttempts: config.maxAttempts,
      retryBackoffInitialMs: config.retryBackoffInitialMs,
      retryBackoffMaxMs: config.retryBackoffMaxMs,
    },
  );
  const listener = new NotifyListener({
    databaseUrl: context.databaseUrl,
    channel: notifyChannel(config.schema, config.table),
    logger,
    onNotify: () => relay.notify(),
  });
  listener.start();
  logger.info(
    { table: `${config.schema}.${config.table}`, pollIntervalMs: config.pollIntervalMs },
    'polling the outbox',
  );
  // Poll relays share the table (SKIP LOCKED): every one of them delivers.
  context.onRole?.('active');
  try {
    await relay.run(context.stop);
    logger.info({}, 'stopped; the last batch is committed');
  } finally {
    await listener.stop();
    await pool.end().catch(() => undefined);
  }
}
