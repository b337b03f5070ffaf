import { SinkError } from '../sinkError.js';

/** Protocol errors that reject the records themselves: retrying the same bytes can never succeed. */
const RECORD_REJECTIONS = new Set([
  'MESSAGE_TOO_LARGE',
  'RECORD_LIST_TOO_LARGE',
  'INVALID_RECORD',
  'CORRUPT_MESSAGE',
]);

/** Protocol errors about a topic, not the cluster: events for other topics can still be produced. */
const TOPIC_ERRORS = new Set([
  'UNKNOWN_TOPIC_OR_PARTITION',
  'TOPIC_AUTHORIZATION_FAILED',
  'INVALID_TOPIC_EXCEPTION',
  'POLICY_VIOLATION',
  'INVALID_REPLICATION_FACTOR',
  'INVALID_CONFIG',
]);

/** Refusals of a topic creation that only a change of configuration (or an operator) can fix. */
const CREATE_REFUSALS: ReadonlyMap<string, string> = new Map([
  [
    'INVALID_REPLICATION_FACTOR',
    'set --topic-replication-factor to at most the number of brokers (or leave it unset for the broker default)',
  ],
  ['INVALID_PARTITIONS', 'set --topic-partitions to a number the cluster accepts'],
  ['INVALID_CONFIG', "check the broker's topic defaults, or create the topic yourself"],
  ['POLICY_VIOLATION', "the cluster's create-topic policy refuses it: create the topic yourself"],
  ['TOPIC_AUTHORIZATION_FAILED', 'grant CREATE on the topic to the Kafka user, or create the topic yourself'],
  [
    'CLUSTER_AUTHORIZATION_FAILED',
    'grant CREATE on the cluster to the Kafka user, or create the topic yourself',
  ],
  ['INVALID_TOPIC_EXCEPTION', 'the name is not a valid Kafka topic name: change --topic or --topic-template'],
]);

/**
 * Wraps a failed topic creation: a refusal the configuration causes is a SINK_MISCONFIGURED error saying what to
 * change; anything else (an outage, a topic created meanwhile by another relay) is an ordinary sink error.
 */
export function toCreateTopicError(error: unknown, topics: readonly string[]): SinkError {
  const type = findProtocolErrorType(error);
  const fix = type === undefined ? undefined : CREATE_REFUSALS.get(type);
  if (fix === undefined) return toSinkError(error, `create Kafka topic ${topics.join(', ')}`);
  return new SinkError(
    `the cluster refused to create Kafka topic ${topics.join(', ')} (${type ?? ''}): ${fix}`,
    {
      cause: error,
      retriable: true,
      topicScoped: true,
      misconfigured: true,
    },
  );
}

/** The protocol error type (e.g. MESSAGE_TOO_LARGE) anywhere in a kafkajs error's cause chain. */
export function findProtocolErrorType(error: unknown): string | undefined {
  for (let current: unknown = error, depth = 0; current instanceof Error && depth < 10; depth++) {
    if ('type' in current && typeof current.type === 'string') return current.type;
    if ('errors' in current && Array.isArray(current.errors)) {
      for (const inner of current.errors) {
        const type = findProtocolErrorType(inner);
        if (type !== undefined) return type;
      }
    }
    current = current.cause;
  }
  return undefined;
}

/** True when the broker rejected the records (split the batch to find the culprit), not the request. */
export function isRecordRejection(error: unknown): boolean {
  const type = findProtocolErrorType(error);
  return type !== undefined && RECORD_REJECTIONS.has(type);
}

/**
 * Wraps a kafkajs failure. Everything that is not a record rejection is retried: a broker outage, a moved leader,
 * a missing ACL or topic all need time or an operator, and giving up would lose events (guarantee G1).
 */
export function toSinkError(error: unknown, context: string): SinkError {
  const type = findProtocolErrorType(error);
  const message = error instanceof Error ? error.message : String(error);
  return new SinkError(`${context}: ${message}${type === undefined ? '' : ` (${type})`}`, {
    cause: error,
    retriable: !isRecordRejection(error),
    topicScoped: type !== undefined && TOPIC_ERRORS.has(type),
  });
}
