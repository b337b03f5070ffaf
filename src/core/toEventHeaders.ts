import type { OutboxRecord } from './outboxRecord.js';
import { splitJsonObject } from './splitJsonObject.js';

/** Header names walbox sets itself; a row's own headers never override them. */
export const RESERVED_HEADERS = ['id', 'event_type', 'aggregate_type', 'aggregate_id', 'created_at'] as const;

/** The start of a bad `headers` value quoted in a reason: enough to recognise it in last_error. */
const QUOTE_LIMIT = 100;

/**
 * Why a row's `headers` value cannot become Kafka headers, or undefined when it can. SQL NULL and JSON `null`
 * mean "no headers"; anything else must be a JSON object. An array, string, number or boolean has no header
 * names, and guessing some would put on the topic something the writer did not mean: the event is rejected
 * (dead-lettered with this text as last_error) rather than sent with its headers silently dropped.
 */
export function explainBadHeaders(headers: string | null): string | undefined {
  if (headers === null) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(headers);
  } catch {
    return `the headers column is not JSON: ${quote(headers)}`;
  }
  if (value === null || (typeof value === 'object' && !Array.isArray(value))) return undefined;
  const kind = Array.isArray(value) ? 'an array' : `a ${typeof value}`;
  return (
    `the headers column must be a JSON object of header names (or NULL), not ${kind}: ${quote(headers)}; ` +
    `fix the row and retry it with walbox dlq retry`
  );
}

/**
 * The Kafka headers of an event: the reserved ones, plus the row's `headers` object with
 * string values as they are and other values as their JSON text.
 *
 * - The map has no prototype: a row's header named `__proto__`, `constructor` or `toString` is an ordinary
 *   header, neither lost nor able to change the object.
 * - A JSON `null` value is left out. Kafka allows a header with a null value, but kafkajs 2.2.4 cannot produce
 *   one (its record encoder calls Buffer.byteLength(null) and throws), and the empty string would be confused
 *   with `""`. Consumers read a null header as absent (toConsumedEvent), so both meet in the same place.
 * - A `headers` value that is not an object contributes nothing here; explainBadHeaders() says why, and the
 *   sink rejects such an event before it gets here (the dead-letter copy then carries the reserved headers).
 * - The reserved names win over the row's own.
 */
export function toEventHeaders(record: OutboxRecord): Record<string, string> {
  const headers = Object.create(null) as Record<string, string>;
  for (const [key, raw] of record.headers === null ? [] : (splitJsonObject(record.headers) ?? [])) {
    if (raw === 'null') continue;
    headers[key] = raw.startsWith('"') ? (JSON.parse(raw) as string) : raw;
  }
  headers['id'] = record.id;
  headers['event_type'] = record.eventType;
  headers['aggregate_type'] = record.aggregateType;
  headers['aggregate_id'] = record.aggregateId;
  headers['created_at'] = record.createdAt;
  return headers;
}

function quote(text: string): string {
  return text.length <= QUOTE_LIMIT
    ? JSON.stringify(text)
    : `${JSON.stringify(text.slice(0, QUOTE_LIMIT))}… (${text.length} characters)`;
}
