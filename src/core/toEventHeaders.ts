import type { OutboxRecord } from './outboxRecord.js';
import { splitJsonObject } from './splitJsonObject.js';

/** Header names walbox sets by default; a row's own headers never override them. */
export const RESERVED_HEADERS = ['id', 'event_type', 'aggregate_type', 'aggregate_id', 'created_at'] as const;

/** The event fields that can go out as headers besides `id` (--metadata-headers). */
export const METADATA_FIELDS = ['event_type', 'aggregate_type', 'aggregate_id', 'created_at'] as const;
export type MetadataField = (typeof METADATA_FIELDS)[number];

export interface MetadataHeader {
  readonly field: MetadataField;
  readonly header: string;
}

/** Which headers an event gets: metadata fields under their names, and the names of the header columns. */
export interface HeaderLayout {
  readonly metadata: readonly MetadataHeader[];
  /** One name per value of OutboxRecord.headerValues, in order. */
  readonly columnHeaders: readonly string[];
}

export const DEFAULT_HEADER_LAYOUT: HeaderLayout = {
  metadata: METADATA_FIELDS.map((field) => ({ field, header: field })),
  columnHeaders: [],
};

const FIELD_VALUE: Record<MetadataField, (record: OutboxRecord) => string> = {
  event_type: (r) => r.eventType,
  aggregate_type: (r) => r.aggregateType,
  aggregate_id: (r) => r.aggregateId,
  created_at: (r) => r.createdAt,
};

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
 * The Kafka headers of an event: `id`, the row's `headers` object (string values as they are, other values as
 * their JSON text), the header columns (a NULL sends none), the metadata headers; a later one wins over an
 * earlier one of the same name, and `id` over all.
 *
 * - The map has no prototype: a row's header named `__proto__`, `constructor` or `toString` is an ordinary
 *   header, neither lost nor able to change the object.
 * - A JSON `null` value is left out. Kafka allows a header with a null value, but kafkajs 2.2.4 cannot produce
 *   one (its record encoder calls Buffer.byteLength(null) and throws), and the empty string would be confused
 *   with `""`. Consumers read a null header as absent (toConsumedEvent), so both meet in the same place.
 * - A `headers` value that is not an object contributes nothing here; explainBadHeaders() says why, and the
 *   sink rejects such an event before it gets here (the dead-letter copy then carries the reserved headers).
 */
export function toEventHeaders(
  record: OutboxRecord,
  layout: HeaderLayout = DEFAULT_HEADER_LAYOUT,
): Record<string, string> {
  const headers = Object.create(null) as Record<string, string>;
  // First in order, as Debezium's EventRouter puts it (set again last, so that its value wins).
  headers['id'] = record.id;
  for (const [key, raw] of record.headers === null ? [] : (splitJsonObject(record.headers) ?? [])) {
    if (raw === 'null') continue;
    headers[key] = raw.startsWith('"') ? (JSON.parse(raw) as string) : raw;
  }
  layout.columnHeaders.forEach((name, i) => {
    const value = record.headerValues?.[i];
    if (value !== undefined && value !== null) headers[name] = value;
  });
  for (const { field, header } of layout.metadata) headers[header] = FIELD_VALUE[field](record);
  headers['id'] = record.id;
  return headers;
}

function quote(text: string): string {
  return text.length <= QUOTE_LIMIT
    ? JSON.stringify(text)
    : `${JSON.stringify(text.slice(0, QUOTE_LIMIT))}… (${text.length} characters)`;
}
