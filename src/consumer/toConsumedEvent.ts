import type { EachMessagePayload, IHeaders } from 'kafkajs';

import { RESERVED_HEADERS } from '../core/toEventHeaders.js';
import { WalboxError } from '../errors.js';
import type { ConsumedEvent } from './consumedEvent.js';
import { isEventId } from '../outbox/isEventId.js';

/** processed_events.event_id is a uuid; checking first turns a cryptic SQL error into a clear one. */

/**
 * Decodes a Kafka message that walbox produced. A message that is not a walbox event (a reserved header missing
 * or repeated, an id that is not a UUID, no value, a value that is not JSON) is a WalboxError with code
 * DECODE_FAILED and `retriable: false`: retrying cannot fix it, and kafkajs stops instead of looping on it.
 */
export function toConsumedEvent({
  topic,
  partition,
  message,
}: Pick<EachMessagePayload, 'topic' | 'partition' | 'message'>): ConsumedEvent {
  const where = `message at ${topic} partition ${partition} offset ${message.offset}`;
  const headers = readHeaders(message.headers, where);
  const missing = RESERVED_HEADERS.filter((name) => headers[name] === undefined);
  if (missing.length > 0) {
    throw decodeError(
      `${where} has no ${missing.join(', ')} header${missing.length > 1 ? 's' : ''}: not a walbox event ` +
        `(walbox sets ${RESERVED_HEADERS.join(', ')}; the id is what deduplication needs)`,
    );
  }
  const id = headers['id'] ?? '';
  if (!isEventId(id)) throw decodeError(`${where}: the id header ${JSON.stringify(id)} is not a UUID`);
  if (message.value === null) throw decodeError(`${where} (event ${id}) has no value`);
  const payloadJson = message.value.toString('utf8');
  let payload: unknown;
  try {
    payload = JSON.parse(payloadJson);
  } catch (thrown) {
    throw decodeError(`${where} (event ${id}): the value is not JSON`, thrown);
  }
  return {
    id,
    eventType: headers['event_type'] ?? '',
    aggregateType: headers['aggregate_type'] ?? '',
    aggregateId: headers['aggregate_id'] ?? '',
    createdAt: headers['created_at'] ?? '',
    payload,
    payloadJson,
    headers,
  };
}

/** What kafkajs decodes, whatever its types say: a header sent with a null value (Kafka allows it) is null. */
type DecodedHeaderValue = Buffer | string | null | undefined;

/**
 * The headers as text, in a map without a prototype so that a header named `__proto__` or `constructor` is an
 * ordinary one. A header whose value is null carries nothing and is treated as absent (walbox never sends one:
 * it leaves a JSON null out; another producer may).
 */
function readHeaders(raw: IHeaders | undefined, where: string): Record<string, string> {
  const headers = Object.create(null) as Record<string, string>;
  const entries = Object.entries(raw ?? {}) as [string, DecodedHeaderValue | DecodedHeaderValue[]][];
  for (const [name, value] of entries) {
    const values = (Array.isArray(value) ? value : [value]).filter(
      (v): v is Buffer | string => v !== null && v !== undefined,
    );
    // Kafka lets a header name repeat (kafkajs then gives an array). walbox never repeats its own names; two
    // event ids would make deduplication ambiguous, so that is refused rather than guessed.
    if (values.length > 1 && (RESERVED_HEADERS as readonly string[]).includes(name)) {
      throw decodeError(`${where}: the ${name} header appears ${values.length} times`);
    }
    const last = values.at(-1);
    if (last !== undefined) headers[name] = last.toString();
  }
  return headers;
}

function decodeError(message: string, cause?: unknown): WalboxError {
  return new WalboxError('DECODE_FAILED', message, { cause, retriable: false });
}
