import pg from 'pg';

import { startRelayProcess, type RelayProcess } from './relayProcess.js';
import { TopicReader } from './topicReader.js';
import { createWalFixture, type WalFixture } from './walFixture.js';

export interface RelaySetup {
  readonly fixture: WalFixture;
  /** The quoted outbox table of the fixture. */
  readonly table: string;
  readonly relays: RelayProcess[];
  /** One reader of the "order" topic, started on first use. */
  readonly reader: () => Promise<TopicReader>;
  /** Starts `walbox run` on the fixture, with --batch-size and any extra flags. */
  readonly startRelay: (...extra: string[]) => RelayProcess;
}

/**
 * Runs `body` with a fresh fixture, a topic for aggregate type "order", relays and a reader; prints the relays'
 * last lines when it fails and always cleans up (stopped relays are continued, then killed).
 */
export async function withRelaySetup(
  body: (setup: RelaySetup) => Promise<void>,
  options: {
    batchSize?: number;
    topic?: { partitions?: number; config?: Record<string, string> };
    /** Environment of every relay process (e.g. NODE_OPTIONS for a test-only preload). */
    relayEnv?: Record<string, string>;
    /** The database of the fixture and the relays (default: the stack's). */
    databaseUrl?: string;
    /** Runs before the fixture is migrated (see createWalFixture). */
    prepare?: (client: pg.Client, schema: string) => Promise<void>;
  } = {},
): Promise<void> {
  const fixture = await createWalFixture({ databaseUrl: options.databaseUrl, prepare: options.prepare });
  const relays: RelayProcess[] = [];
  let reader: TopicReader | undefined;
  try {
    await fixture.createTopic(fixture.topicFor('order'), options.topic);
    await body({
      fixture,
      table: `${pg.escapeIdentifier(fixture.schema)}.outbox_events`,
      relays,
      reader: async () => (reader ??= await TopicReader.start([fixture.topicFor('order')])),
      startRelay: (...extra) => {
        const relay = startRelayProcess(
          fixture.relayArgs('--batch-size', String(options.batchSize ?? 100), ...extra),
          options.relayEnv,
        );
        relays.push(relay);
        return relay;
      },
    });
  } catch (error) {
    // The relay's own words are the first thing to read when a scenario fails.
    for (const [i, relay] of relays.entries())
      console.error(`relay ${i + 1}:\n${relay.lines.slice(-30).join('\n')}`);
    throw error;
  } finally {
    for (const relay of relays) {
      relay.child.kill('SIGCONT');
      await relay.stop('SIGKILL');
    }
    await reader?.stop();
    await fixture.cleanUp();
  }
}

/** Rows of the fixture's outbox marked processed. */
export async function countProcessed(fixture: WalFixture): Promise<number> {
  const rows = await fixture.query<{ n: string }>(
    `SELECT count(*) AS n FROM ${pg.escapeIdentifier(fixture.schema)}.outbox_events WHERE processed_at IS NOT NULL`,
  );
  return Number(rows[0]?.n);
}
