import pg from 'pg';

import type { RelayLogger } from '../../core/ports.js';
import { toPgClientConfig } from '../../db/pgClientConfig.js';
import { summarizeError } from '../../errors.js';

/**
 * Keeps a LISTEN connection open and calls `onNotify` for each notification. Reconnects (and LISTENs again)
 * with backoff after any failure; the poll interval keeps delivering meanwhile.
 */
export class NotifyListener {
  private client: pg.Client | undefined;
  private stopped = false;
  private delay = 500;

  constructor(
    private readonly options: {
      readonly databaseUrl: string;
      readonly channel: string;
      readonly logger: RelayLogger;
      readonly onNotify: () => void;
    },
  ) {}

  start(): void {
    void this.connect();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.client?.end().catch(() => undefined);
  }

  private async connect(): Promise<void> {
    if (this.stopped) return;
    const client = new pg.Client({
      ...toPgClientConfig(this.options.databaseUrl),
      application_name: 'walbox listen',
      keepAlive: true,
    });
    this.client = client;
    const reconnect = (error: unknown): void => {
      if (this.stopped || this.client !== client) return;
      this.client = undefined;
      this.options.logger.warn(
        { err: summarizeError(error), retryInMs: this.delay },
        'LISTEN connection lost; polling on the interval meanwhile',
      );
      void client.end().catch(() => undefined);
      setTimeout(() => void this.connect(), this.delay).unref();
      this.delay = Math.min(this.delay * 2, 30_000);
    };
    client.on('error', reconnect);
    client.on('end', () => reconnect(new Error('connection ended')));
    client.on('notification', () => this.options.onNotify());
    try {
      await client.connect();
      await client.query(`LISTEN ${pg.escapeIdentifier(this.options.channel)}`);
      this.delay = 500;
      this.options.logger.debug({ channel: this.options.channel }, 'listening for outbox notifications');
      // Rows may have arrived while we were not listening.
      this.options.onNotify();
    } catch (error) {
      reconnect(error);
    }
  }
}
