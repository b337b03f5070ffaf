import type { Message } from 'kafkajs';

import type { OutboxRecord } from '../../core/outboxRecord.js';
import { toEventHeaders } from '../../core/toEventHeaders.js';

/** Record batch header plus per-record framing, generously rounded (v2 format: 61-byte batch header). */
const BATCH_OVERHEAD_BYTES = 61;
const RECORD_OVERHEAD_BYTES = 32;
const HEADER_OVERHEAD_BYTES = 10;

/** Key aggregate_id (same partition as a Java producer would pick), value the payload's jsonb text. */
export function toKafkaMessage(record: OutboxRecord): Message {
  return { key: record.aggregateId, value: record.payload, headers: toEventHeaders(record) };
}

/** An upper estimate of the bytes one message adds to a record batch (uncompressed). */
export function estimateMessageBytes(message: Message): number {
  let bytes = RECORD_OVERHEAD_BYTES + byteLength(message.key) + byteLength(message.value);
  for (const [name, value] of Object.entries(message.headers ?? {})) {
    bytes +=
      HEADER_OVERHEAD_BYTES +
      Buffer.byteLength(name) +
      byteLength(Array.isArray(value) ? value.join('') : value);
  }
  return bytes;
}

/** The size of a one-message batch, compared with the topic's max.message.bytes before sending. */
export function estimateSingleBatchBytes(message: Message): number {
  return BATCH_OVERHEAD_BYTES + estimateMessageBytes(message);
}

function byteLength(value: Buffer | string | null | undefined): number {
  if (value === null || value === undefined) return 0;
  return typeof value === 'string' ? Buffer.byteLength(value) : value.length;
}
