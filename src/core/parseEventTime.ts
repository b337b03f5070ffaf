import { toIsoTimestamp } from './formatPgTimestamp.js';

const EPOCH_MS = /^-?\d{1,16}$/;
const PG_TIMESTAMP = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(?:\.\d{1,6})?$/;

/**
 * The event-timestamp column's value (as PostgreSQL prints it) in Unix milliseconds: timestamptz, timestamp
 * without time zone (read as UTC, as Debezium reads it) or an integer of epoch milliseconds. Undefined for
 * anything else (`infinity`, BC, dates before 1970: Kafka takes no negative timestamp), and the record then
 * gets the send time rather than a made-up instant.
 */
export function parseEventTime(text: string): number | undefined {
  if (EPOCH_MS.test(text)) return toEventTimeMs(Number(text));
  return parseUtcEventTime(toIsoTimestamp(PG_TIMESTAMP.test(text) ? `${text}+00` : text));
}

/** The event time of toIsoTimestamp's output (when it converted the text: an instant ending in `Z`). */
export function parseUtcEventTime(iso: string): number | undefined {
  return iso.endsWith('Z') ? toEventTimeMs(Date.parse(iso)) : undefined;
}

function toEventTimeMs(ms: number): number | undefined {
  return Number.isSafeInteger(ms) && ms >= 0 ? ms : undefined;
}
