import { Kafka, logLevel } from 'kafkajs';
import type pg from 'pg';

import { migrate } from '../../src/db/migrate.js';
import { dropSchema, withClient } from './testDatabase.js';
import { requireDatabaseUrl, requireKafkaBrokers, uniqueName } from './testEnv.js';

export interface WalFixture {
  readonly schema: string;
  readonly publication: string;
  readonly slot: string;
  readonly topicPrefix: string;
  readonly databaseUrl: string;
  readonly brokers: string;
  /** The topic events of `aggregateType` go to. */
  topicFor(aggregateType: string): string;
  /** Flags for `walbox run` against this fixture. */
  relayArgs(...extra: string[]): string[];
  createTopic(
    topic: string,
    options?: { partitions?: number; config?: Record<string, string> },
  ): Promise<void>;
  deleteTopic(topic: string): Promise<void>;
  /** The next offset of each partition of `topic` (what a reader has to reach to have read it all). */
  topicEndOffsets(topic: string): Promise<Map<number, bigint>>;
  /** Bytes of WAL the slot has not confirmed yet. */
  slotLagBytes(): Promise<number>;
  /** Bytes of WAL the slot keeps on disk (from restart_lsn). */
  slotRetainedBytes(): Promise<number>;
  query<R extends pg.QueryResultRow>(text: string, values?: unknown[]): Promise<R[]>;
  cleanUp(): Promise<void>;
}

/** Bytes between the current WAL position and one of the slot's positions (NaN without the slot). */
async function slotWalDistance(
  url: string,
  slot: string,
  column: 'confirmed_flush_lsn' | 'restart_lsn',
): Promise<number> {
  const rows = await withClient(async (client) => {
    const result = await client.query<{ bytes: string | null }>(
      `SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), ${column})::text AS bytes FROM pg_replication_slots WHERE slot_name = $1`,
      [slot],
    );
    return result.rows;
  }, url);
  return Number(rows[0]?.bytes ?? Number.NaN);
}

/**
 * A migrated outbox in its own schema, with its own publication, slot name and topic prefix; on the stack's
 * cluster, or on `databaseUrl` (e.g. a proxy in front of a primary that fails over).
 */
export async function createWalFixture(
  options: {
    readonly databaseUrl?: string;
    /** Runs before `walbox migrate`, e.g. to create the outbox table the way a user would (partitioned). */
    readonly prepare?: (client: pg.Client, schema: string) => Promise<void>;
  } = {},
): Promise<WalFixture> {
  const schema = uniqueName('wal');
  const publication = uniqueName('pub');
  const slot = uniqueName('slot');
  const topicPrefix = uniqueName('wt');
  const databaseUrl = options.databaseUrl ?? requireDatabaseUrl();
  const brokers = requireKafkaBrokers();
  await withClient(async (client) => {
    await options.prepare?.(client, schema);
    await migrate(client, { schema, table: 'outbox_events', publication });
  }, databaseUrl);
  const kafka = new Kafka({ clientId: 'walbox-test-fixture', brokers, logLevel: logLevel.NOTHING });
  const admin = kafka.admin();
  await admin.connect();
  const topics: string[] = [];
  return {
    schema,
    publication,
    slot,
    topicPrefix,
    databaseUrl,
    brokers: brokers.join(','),
    topicFor: (aggregateType) => `${topicPrefix}.${aggregateType}`,
    relayArgs: (...extra) => [
      '--database-url',
      databaseUrl,
      '--kafka-brokers',
      brokers.join(','),
      '--schema',
      schema,
      '--publication',
      publication,
      '--slot',
      slot,
      '--topic-template',
      `${topicPrefix}.{aggregate_type}`,
      '--metrics-port',
      '0',
      '--status-interval',
      '1s',
      '--retry-backoff-initial',
      '200ms',
      ...extra,
    ],
    async createTopic(topic, options = {}) {
      topics.push(topic);
      await admin.createTopics({
        waitForLeaders: true,
        topics: [
          {
            topic,
            numPartitions: options.partitions ?? 3,
            replicationFactor: 1,
            configEntries: Object.entries(options.config ?? {}).map(([name, value]) => ({ name, value })),
          },
        ],
      });
    },
    async deleteTopic(topic) {
      await admin.deleteTopics({ topics: [topic] });
    },
    async topicEndOffsets(topic) {
      const offsets = await admin.fetchTopicOffsets(topic);
      return new Map(offsets.map((o) => [o.partition, BigInt(o.high)]));
    },
    slotLagBytes: () => slotWalDistance(databaseUrl, slot, 'confirmed_flush_lsn'),
    slotRetainedBytes: () => slotWalDistance(databaseUrl, slot, 'restart_lsn'),
    query: <R extends pg.QueryResultRow>(text: string, values?: unknown[]) =>
      withClient(async (client) => (await client.query<R>(text, values)).rows, databaseUrl),
    async cleanUp() {
      await withClient(
        (client) =>
          client.query(
            `SELECT pg_terminate_backend(active_pid) FROM pg_replication_slots WHERE slot_name = $1 AND active_pid IS NOT NULL`,
            [slot],
          ),
        databaseUrl,
      );
      await withClient(async (client) => {
        for (let attempt = 0; attempt < 50; attempt++) {
          try {
            await client.query(
              'SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = $1',
              [slot],
            );
            return;
          } catch {
            await new Promise((resolve) => setTimeout(resolve, 100));
          }
        }
      }, databaseUrl);
      await dropSchema(schema, publication, databaseUrl);
      if (topics.length > 0) await admin.deleteTopics({ topics }).catch(() => undefined);
      await admin.disconnect();
    },
  };
}

/** Flags of the commands that read a fixture's slot and publication (status, doctor), with any extra flags. */
export function buildSlotCommandArgs(fixture: WalFixture, ...extra: string[]): string[] {
  return [
    '--database-url',
    fixture.databaseUrl,
    '--schema',
    fixture.schema,
    '--slot',
    fixture.slot,
    '--publication',
    fixture.publication,
    ...extra,
  ];
}
