import { isAsciiDigit, toIsoTimestamp } from './formatPgTimestamp.js';

const DOT = 46;

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
  if (!iso.endsWith('Z')) return undefined;
  const isConverted = isToIsoOutput(iso);
  // Date.parse keeps the first three digits of the fraction: the rest of the second is the same for all.
  if (isConverted && lastSecond !== undefined && iso.startsWith(lastSecond.head))
    return toEventTimeMs(lastSecond.ms + readMillis(iso));
  const ms = Date.parse(iso);
  if (isConverted && !Number.isNaN(ms)) lastSecond = { head: iso.slice(0, 19), ms: ms - readMillis(iso) };
  return toEventTimeMs(ms);
}

/** The last second parsed, as for toIsoTimestamp: events written close together share it. */
let lastSecond: { readonly head: string; readonly ms: number } | undefined;

/** `YYYY-MM-DDTHH:MM:SS.ffffffZ`, as far as the fraction goes (the rest is what Date.parse checks). */
function isToIsoOutput(iso: string): boolean {
  if (iso.length !== 27 || iso.charCodeAt(19) !== DOT) return false;
  for (let i = 20; i < 26; i++) if (!isAsciiDigit(iso.charCodeAt(i))) return false;
  return true;
}

function readMillis(iso: string): number {
  return (iso.charCodeAt(20) - 48) * 100 + (iso.charCodeAt(21) - 48) * 10 + (iso.charCodeAt(22) - 48);
}

function toEventTimeMs(ms: number): number | undefined {
  return Number.isSafeInteger(ms) && ms >= 0 ? ms : undefined;
}
