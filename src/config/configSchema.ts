import type { RelayConfig } from './relayConfig.js';

/** How a raw string from a flag or the environment becomes a typed value (see parseOptionValue). */
export type OptionKind =
  | 'string'
  | 'identifier'
  | 'tableName'
  | 'slotName'
  | 'topicName'
  | 'topicTemplate'
  | 'integer'
  | 'duration'
  | 'boolean'
  | 'choice'
  | 'brokerList'
  | 'databaseUrl'
  | 'filePath'
  | 'regex'
  | 'headerColumns'
  | 'metadataHeaders';

export interface OptionSpec {
  readonly key: keyof RelayConfig;
  /** The long flag without dashes; the environment variable is WALBOX_<FLAG_IN_UPPER_SNAKE>. */
  readonly flag: string;
  readonly kind: OptionKind;
  readonly description: string;
  readonly default: RelayConfig[keyof RelayConfig];
  /** A conventional variable read when WALBOX_<FLAG> is not set (DATABASE_URL, KAFKA_BROKERS). */
  readonly fallbackEnv?: string;
  /** May hold a secret: also read from WALBOX_<FLAG>_FILE, and never logged. */
  readonly secret?: boolean;
  /** Refused as a flag (other users of the host see command lines): environment or WALBOX_<FLAG>_FILE only. */
  readonly envOnly?: boolean;
  readonly choices?: readonly string[];
  readonly min?: number;
  readonly max?: number;
  /** The commands that accept this option as a flag. */
  readonly commands: readonly CommandName[];
}

export type CommandName = 'run' | 'migrate' | 'status' | 'doctor' | 'slot' | 'dlq' | 'replay' | 'cleanup';

const DB_COMMANDS: readonly CommandName[] = [
  'run',
  'migrate',
  'status',
  'doctor',
  'slot',
  'dlq',
  'replay',
  'cleanup',
];
const RUN: readonly CommandName[] = ['run'];
const KAFKA_COMMANDS: readonly CommandName[] = ['run', 'doctor', 'dlq', 'replay'];
/** The commands that read events from the table (or create it). */
const SHAPE_COMMANDS: readonly CommandName[] = ['run', 'migrate', 'doctor', 'dlq', 'replay'];
/** The commands that publish. */
const PUBLISH_COMMANDS: readonly CommandName[] = ['run', 'dlq', 'replay'];

/**
 * The single source of truth for every option: flag, environment variable, type and default.
 * docs/configuration.md is checked against this list by a test.
 */
export const OPTION_SPECS: readonly OptionSpec[] = [
  {
    key: 'mode',
    flag: 'mode',
    kind: 'choice',
    choices: ['wal', 'poll'],
    default: 'wal',
    description: 'wal streams the outbox from a logical replication slot; poll claims rows with SKIP LOCKED',
    commands: ['run', 'status', 'doctor'],
  },
  {
    key: 'databaseUrl',
    flag: 'database-url',
    kind: 'databaseUrl',
    default: undefined,
    fallbackEnv: 'DATABASE_URL',
    secret: true,
    description: 'PostgreSQL connection URL (postgres://user@host:port/db?sslmode=verify-full)',
    commands: DB_COMMANDS,
  },
  {
    key: 'kafkaBrokers',
    flag: 'kafka-brokers',
    kind: 'brokerList',
    default: [],
    fallbackEnv: 'KAFKA_BROKERS',
    description: 'comma-separated Kafka bootstrap servers (host:port,host:port)',
    commands: KAFKA_COMMANDS,
  },
  {
    key: 'kafkaSsl',
    flag: 'kafka-ssl',
    kind: 'boolean',
    default: false,
    description:
      'connect to Kafka over TLS (implied by any --kafka-ssl-* option); certificates and host names are verified',
    commands: KAFKA_COMMANDS,
  },
  {
    key: 'kafkaSslCaFile',
    flag: 'kafka-ssl-ca-file',
    kind: 'filePath',
    default: undefined,
    description: "PEM file of the CA(s) that signed the brokers' certificates (default: the system store)",
    commands: KAFKA_COMMANDS,
  },
  {
    key: 'kafkaSslCertFile',
    flag: 'kafka-ssl-cert-file',
    kind: 'filePath',
    default: undefined,
    description: 'PEM client certificate for mutual TLS (with --kafka-ssl-key-file)',
    commands: KAFKA_COMMANDS,
  },
  {
    key: 'kafkaSslKeyFile',
    flag: 'kafka-ssl-key-file',
    kind: 'filePath',
    default: undefined,
    description: 'PEM private key of --kafka-ssl-cert-file (unencrypted)',
    commands: KAFKA_COMMANDS,
  },
  {
    key: 'kafkaSslInsecure',
    flag: 'kafka-ssl-insecure',
    kind: 'boolean',
    default: false,
    description:
      "TLS without verifying the brokers' certificates or host names (warns at every start; never in production)",
    commands: KAFKA_COMMANDS,
  },
  {
    key: 'kafkaSaslMechanism',
    flag: 'kafka-sasl-mechanism',
    kind: 'choice',
    choices: ['plain', 'scram-sha-256', 'scram-sha-512', 'oauthbearer'],
    default: undefined,
    description: 'SASL authentication to Kafka; none by default',
    commands: KAFKA_COMMANDS,
  },
  {
    key: 'kafkaSaslUsername',
    flag: 'kafka-sasl-username',
    kind: 'string',
    default: undefined,
    description: 'SASL user (plain, scram-sha-256, scram-sha-512)',
    commands: KAFKA_COMMANDS,
  },
  {
    key: 'kafkaSaslPassword',
    flag: 'kafka-sasl-password',
    kind: 'string',
    default: undefined,
    secret: true,
    envOnly: true,
    description: 'SASL password: environment or its _FILE variant only, never a flag',
    commands: KAFKA_COMMANDS,
  },
  {
    key: 'kafkaSaslOauthbearerTokenFile',
    flag: 'kafka-sasl-oauthbearer-token-file',
    kind: 'filePath',
    default: undefined,
    description: 'file holding the OAUTHBEARER token; read again at every (re-)authentication',
    commands: KAFKA_COMMANDS,
  },
  {
    key: 'schema',
    flag: 'schema',
    kind: 'identifier',
    default: 'public',
    description: 'schema of the outbox table',
    commands: DB_COMMANDS,
  },
  {
    key: 'table',
    flag: 'table',
    kind: 'tableName',
    default: 'outbox_events',
    description: 'name of the outbox table',
    commands: DB_COMMANDS,
  },
  {
    key: 'outboxShape',
    flag: 'outbox-shape',
    kind: 'choice',
    choices: ['walbox', 'debezium'],
    default: 'walbox',
    description:
      "the table's column names: walbox's, or Debezium's outbox table (id, aggregatetype, aggregateid, type, payload; then also the topic template outbox.event.${routedByValue} and only the id header); the *-column options override single columns",
    commands: SHAPE_COMMANDS,
  },
  {
    key: 'idColumn',
    flag: 'id-column',
    kind: 'identifier',
    default: undefined,
    description: 'column of the event id, a uuid (the `id` header) [default: id]',
    commands: SHAPE_COMMANDS,
  },
  {
    key: 'keyColumn',
    flag: 'key-column',
    kind: 'identifier',
    default: undefined,
    description:
      'column of the aggregate id: the Kafka key, and with --routing-column what orders events [default: aggregate_id; debezium: aggregateid]',
    commands: SHAPE_COMMANDS,
  },
  {
    key: 'routingColumn',
    flag: 'routing-column',
    kind: 'identifier',
    default: undefined,
    description:
      'column of the aggregate type: the routing value of --topic-template [default: aggregate_type; debezium: aggregatetype]',
    commands: SHAPE_COMMANDS,
  },
  {
    key: 'eventTypeColumn',
    flag: 'event-type-column',
    kind: 'identifier',
    default: undefined,
    description: 'column of the event type [default: event_type; debezium: type]',
    commands: SHAPE_COMMANDS,
  },
  {
    key: 'payloadColumn',
    flag: 'payload-column',
    kind: 'identifier',
    default: undefined,
    description:
      'column of the payload, the Kafka value (jsonb, json, text or varchar; NULL: a tombstone) [default: payload]',
    commands: SHAPE_COMMANDS,
  },
  {
    key: 'timestampColumn',
    flag: 'timestamp-column',
    kind: 'identifier',
    default: undefined,
    description:
      'column of the event time (timestamptz, timestamp as UTC, or bigint epoch ms), the record timestamp with --kafka-timestamp event [default: created_at]',
    commands: SHAPE_COMMANDS,
  },
  {
    key: 'headerColumns',
    flag: 'header-columns',
    kind: 'headerColumns',
    default: [],
    description:
      'more columns sent as Kafka headers, as column[:header-name],… (a NULL value sends no header)',
    commands: SHAPE_COMMANDS,
  },
  {
    key: 'metadataHeaders',
    flag: 'metadata-headers',
    kind: 'metadataHeaders',
    default: undefined,
    description:
      'headers besides `id`, as field[:header-name],… of event_type, aggregate_type, aggregate_id, created_at, or none [default: all four; debezium: none]',
    commands: PUBLISH_COMMANDS,
  },
  {
    key: 'kafkaTimestamp',
    flag: 'kafka-timestamp',
    kind: 'choice',
    choices: ['event', 'commit', 'send'],
    default: 'event',
    description:
      "the Kafka record timestamp: event = --timestamp-column, commit = the transaction's commit time (WAL mode streaming; else the event time), send = when walbox sends",
    commands: PUBLISH_COMMANDS,
  },
  {
    key: 'slot',
    flag: 'slot',
    kind: 'slotName',
    default: 'walbox',
    description: 'logical replication slot name',
    commands: ['run', 'status', 'doctor', 'slot'],
  },
  {
    key: 'slotFailover',
    flag: 'slot-failover',
    kind: 'choice',
    choices: ['auto', 'on', 'off'],
    default: 'auto',
    description:
      'create the slot as a failover slot, kept by standbys with sync_replication_slots = on (PostgreSQL 17+); auto = when the server supports it',
    commands: ['run', 'doctor', 'slot'],
  },
  {
    key: 'applicationName',
    flag: 'application-name',
    kind: 'identifier',
    default: 'walbox',
    description:
      "application_name of the relay's connections (pg_stat_activity, pg_stat_replication); must not be listed in synchronous_standby_names",
    commands: ['run', 'doctor'],
  },
  {
    key: 'publication',
    flag: 'publication',
    kind: 'identifier',
    default: 'walbox',
    description: 'publication of the outbox table (publish = insert)',
    commands: ['run', 'migrate', 'status', 'doctor', 'slot'],
  },
  {
    key: 'topic',
    flag: 'topic',
    kind: 'topicName',
    default: undefined,
    description: 'send every event to this one topic (overrides --topic-template)',
    commands: ['run', 'dlq', 'replay'],
  },
  {
    key: 'topicTemplate',
    flag: 'topic-template',
    kind: 'topicTemplate',
    default: undefined,
    description:
      'topic per event; placeholders {aggregate_type} (the routing value, also ${routedByValue}) and {event_type} [default: outbox.{aggregate_type}; debezium: outbox.event.${routedByValue}]',
    commands: ['run', 'dlq', 'replay'],
  },
  {
    key: 'topicAllow',
    flag: 'topic-allow',
    kind: 'regex',
    default: undefined,
    description:
      'regular expression a topic from --topic-template must match whole; other events are dead-lettered',
    commands: ['run', 'dlq', 'replay'],
  },
  {
    key: 'createTopics',
    flag: 'create-topics',
    kind: 'boolean',
    default: false,
    description: 'create missing topics through the admin API instead of failing',
    commands: ['run', 'dlq', 'replay'],
  },
  {
    key: 'topicPartitions',
    flag: 'topic-partitions',
    kind: 'integer',
    min: 1,
    max: 10_000,
    default: 6,
    description: 'partitions of topics created by --create-topics',
    commands: ['run', 'dlq', 'replay'],
  },
  {
    key: 'topicReplicationFactor',
    flag: 'topic-replication-factor',
    kind: 'integer',
    min: 1,
    max: 32,
    default: undefined,
    description:
      "replication factor of topics created by --create-topics; unset: the broker's default.replication.factor",
    commands: ['run', 'dlq', 'replay'],
  },
  {
    key: 'batchSize',
    flag: 'batch-size',
    kind: 'integer',
    min: 1,
    max: 10_000,
    default: 200,
    description: 'most events per produce request and per processed_at update',
    commands: RUN,
  },
  {
    key: 'lingerMs',
    flag: 'linger',
    kind: 'duration',
    min: 0,
    max: 1_000,
    default: 5,
    description:
      "WAL mode: a batch that is not full goes out at most once per linger (Kafka's linger.ms); an event after a quiet spell goes at once",
    commands: RUN,
  },
  {
    key: 'pollIntervalMs',
    flag: 'poll-interval',
    kind: 'duration',
    min: 10,
    default: 1_000,
    description: 'poll mode: time between polls when no NOTIFY arrives',
    commands: RUN,
  },
  {
    key: 'maxAttempts',
    flag: 'max-attempts',
    kind: 'integer',
    min: 1,
    max: 1_000,
    default: 10,
    description:
      'poll mode: failed attempts before a row is dead-lettered (topic failures count; broker outages do not)',
    commands: RUN,
  },
  {
    key: 'retryBackoffInitialMs',
    flag: 'retry-backoff-initial',
    kind: 'duration',
    min: 1,
    default: 1_000,
    description: 'first retry delay after a failed publish; doubles up to --retry-backoff-max',
    commands: RUN,
  },
  {
    key: 'retryBackoffMaxMs',
    flag: 'retry-backoff-max',
    kind: 'duration',
    min: 1,
    default: 300_000,
    description: 'longest retry delay',
    commands: RUN,
  },
  {
    key: 'statusIntervalMs',
    flag: 'status-interval',
    kind: 'duration',
    min: 100,
    default: 10_000,
    description: 'WAL mode: time between standby status updates (keep below wal_sender_timeout)',
    commands: RUN,
  },
  {
    key: 'databaseTimeoutMs',
    flag: 'database-timeout',
    kind: 'duration',
    min: 1_000,
    default: 30_000,
    description:
      'a relay query unanswered, or (WAL mode) the replication connection silent although asked to answer, for this long: the connection is presumed dead and replaced',
    commands: RUN,
  },
  {
    key: 'dlqTopic',
    flag: 'dlq-topic',
    kind: 'topicName',
    default: undefined,
    description: 'also produce dead-lettered events to this topic',
    commands: ['run', 'dlq', 'replay'],
  },
  {
    key: 'compression',
    flag: 'compression',
    kind: 'choice',
    choices: ['none', 'gzip'],
    default: 'none',
    description: 'compression of produce requests',
    commands: ['run', 'dlq', 'replay'],
  },
  {
    key: 'metricsHost',
    flag: 'metrics-host',
    kind: 'string',
    default: '127.0.0.1',
    description: 'address of the /metrics, /healthz and /readyz server (0.0.0.0 to serve beyond this host)',
    commands: RUN,
  },
  {
    key: 'metricsPort',
    flag: 'metrics-port',
    kind: 'integer',
    min: 0,
    max: 65_535,
    default: 9464,
    description: 'port of the metrics server; 0 disables it',
    commands: RUN,
  },
  {
    key: 'logLevel',
    flag: 'log-level',
    kind: 'choice',
    choices: ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'],
    default: 'info',
    description: 'log level',
    commands: DB_COMMANDS,
  },
  {
    key: 'logFormat',
    flag: 'log-format',
    kind: 'choice',
    choices: ['auto', 'json', 'pretty'],
    default: 'auto',
    description: 'json lines for log shippers, pretty for people; auto is pretty when stdout is a terminal',
    commands: RUN,
  },
  {
    key: 'startupTimeoutMs',
    flag: 'startup-timeout',
    kind: 'duration',
    min: 0,
    default: 60_000,
    description: 'give up (exit 1) when PostgreSQL or Kafka cannot be reached at startup within this time',
    commands: DB_COMMANDS,
  },
  {
    key: 'shutdownTimeoutMs',
    flag: 'shutdown-timeout',
    kind: 'duration',
    min: 0,
    default: 30_000,
    description: 'on SIGTERM, wait this long for in-flight events to be acked before exiting 1',
    commands: RUN,
  },
];

/** WALBOX_<FLAG_IN_UPPER_SNAKE>. */
export function toEnvName(flag: string): string {
  return `WALBOX_${flag.toUpperCase().replace(/-/g, '_')}`;
}

export function findOptionSpec(key: keyof RelayConfig): OptionSpec {
  const spec = OPTION_SPECS.find((s) => s.key === key);
  if (spec === undefined) throw new Error(`no option spec for ${key}`);
  return spec;
}
