import type { HeaderColumn, OutboxShape } from '../outbox/outboxColumns.js';
import type { MetadataHeader } from '../core/toEventHeaders.js';

export type RelayMode = 'wal' | 'poll';
export type LogLevel = 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'fatal' | 'silent';
export type Compression = 'none' | 'gzip';
export type LogFormat = 'auto' | 'json' | 'pretty';
/** Whether the slot is created as a failover slot (PostgreSQL 17+); auto = when the server supports it. */
export type SlotFailover = 'auto' | 'on' | 'off';
/** What becomes the Kafka record timestamp. */
export type KafkaTimestamp = 'event' | 'commit' | 'send';
export type { OutboxShape } from '../outbox/outboxColumns.js';
export type KafkaSaslMechanism = 'plain' | 'scram-sha-256' | 'scram-sha-512' | 'oauthbearer';

/** The one configuration object: built once by loadConfig(), frozen, passed down explicitly. */
export interface RelayConfig {
  readonly mode: RelayMode;
  readonly databaseUrl: string | undefined;
  readonly kafkaBrokers: readonly string[];
  /** TLS to the brokers; true whenever a CA, certificate or key file or --kafka-ssl-insecure is given. */
  readonly kafkaSsl: boolean;
  readonly kafkaSslCaFile: string | undefined;
  readonly kafkaSslCertFile: string | undefined;
  readonly kafkaSslKeyFile: string | undefined;
  readonly kafkaSslInsecure: boolean;
  readonly kafkaSaslMechanism: KafkaSaslMechanism | undefined;
  readonly kafkaSaslUsername: string | undefined;
  readonly kafkaSaslPassword: string | undefined;
  readonly kafkaSaslOauthbearerTokenFile: string | undefined;
  readonly schema: string;
  readonly table: string;
  /** The column names below default to this shape's (resolved by loadConfig). */
  readonly outboxShape: OutboxShape;
  readonly idColumn: string;
  readonly keyColumn: string;
  readonly routingColumn: string;
  readonly eventTypeColumn: string;
  readonly payloadColumn: string;
  readonly timestampColumn: string;
  readonly headerColumns: readonly HeaderColumn[];
  /** Headers sent besides `id`, by field, under these names. */
  readonly metadataHeaders: readonly MetadataHeader[];
  readonly kafkaTimestamp: KafkaTimestamp;
  readonly slot: string;
  readonly slotFailover: SlotFailover;
  readonly publication: string;
  /** application_name of the relay's connections, the replication connection included. */
  readonly applicationName: string;
  readonly topic: string | undefined;
  /** Resolved by loadConfig: the shape's template unless one is given. */
  readonly topicTemplate: string;
  /** A topic resolved from row content must match this regular expression (whole name), else dead-lettered. */
  readonly topicAllow: string | undefined;
  readonly createTopics: boolean;
  readonly topicPartitions: number;
  /** Unset: the broker's default.replication.factor. */
  readonly topicReplicationFactor: number | undefined;
  readonly batchSize: number;
  /** WAL mode: produce requests of partial batches are paced at one per lingerMs. */
  readonly lingerMs: number;
  readonly pollIntervalMs: number;
  readonly maxAttempts: number;
  readonly retryBackoffInitialMs: number;
  readonly retryBackoffMaxMs: number;
  readonly statusIntervalMs: number;
  /** A relay query or a silent replication connection is given up after this long (half-open connections). */
  readonly databaseTimeoutMs: number;
  readonly dlqTopic: string | undefined;
  readonly compression: Compression;
  readonly metricsHost: string;
  readonly metricsPort: number;
  readonly logLevel: LogLevel;
  readonly logFormat: LogFormat;
  readonly startupTimeoutMs: number;
  readonly shutdownTimeoutMs: number;
}
