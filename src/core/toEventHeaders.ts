import type { OutboxRecord } from './outboxRecord.js';
import { splitJsonObject } from './splitJsonObject.js';

/** Header names walbox sets itself; a row's own headers never override them. */
export const RESERVED_HEADERS = ['id', 'event_type', 'aggregate_type', 'aggregate_id', 'created_at'] as const;

/**
 * The Kafka headers of an event (SPEC §Kafka message): the reserved ones, plus the row's `headers` object with
 * string values as they are and other values as their JSON text.
 */
export function toEventHeaders(record: OutboxRecord): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [key, raw] of record.headers === null ? [] : (splitJsonObject(record.headers) ?? [])) {
    headers[key] = raw.startsWith('"') ? (JSON.parse(raw) as string) : raw;
  }
  headers['id'] = record.id;
  headers['event_type'] = record.eventType;
  headers['aggregate_type'] = record.aggregateType;
  headers['aggregate_id'] = record.aggregateId;
  headers['created_at'] = record.createdAt;
  return headers;
}
