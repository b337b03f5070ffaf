export type RelayMode = 'wal' | 'poll';
export type LogLevel = 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'fatal' | 'silent';
export type Compression = 'none' | 'gzip';
export type LogFormat = 'auto' | 'json' | 'pretty';

/** The one configuration object: built once by loadConfig(), frozen, passed down explicitly. */
export interface RelayConfig {
  readonly mode: RelayMode;
  readonly databaseUrl: string | undefined;
  readonly kafkaBrokers: readonly string[];
  readonly schema: string;
  readonly table: string;
  readonly slot: string;
  readonly publication: string;
  readonly topic: string | undefined;
  readonly topicTemplate: string;
  readonly createTopics: boolean;
  readonly topicPartitions: number;
  readonly topicReplicationFactor: number;
  readonly batchSize: number;
  readonly pollIntervalMs: number;
  readonly maxAttempts: number;
  readonly retryBackoffInitialMs: number;
  readonly retryBackoffMaxMs: number;
  readonly statusIntervalMs: number;
  readonly dlqTopic: string | undefined;
  readonly compression: Compression;
  readonly metricsHost: string;
  readonly metricsPort: number;
  readonly logLevel: LogLevel;
  readonly logFormat: LogFormat;
  readonly startupTimeoutMs: number;
  readonly shutdownTimeoutMs: number;
}
