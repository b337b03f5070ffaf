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
 * a missing ACL or topic all need time or an operator, and giving up would lose events (SPEC G1).
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
