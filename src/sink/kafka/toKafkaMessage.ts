import { gzipSync } from 'node:zlib';

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

/**
 * The size of a one-message gzip batch: the broker checks max.message.bytes against the compressed batch, so a
 * large but compressible event fits. Only computed for events that do not fit uncompressed (rare, and costly).
 */
export function estimateSingleGzipBatchBytes(message: Message): number {
  const headers = Object.entries(message.headers ?? {}).map(([name, value]) =>
    Buffer.concat([Buffer.from(name), toBuffer(Array.isArray(value) ? value.join('') : value)]),
  );
  const records = Buffer.concat([toBuffer(message.key), toBuffer(message.value), ...headers]);
  const framing = estimateMessageBytes(message) - records.length;
  return BATCH_OVERHEAD_BYTES + framing + gzipSync(records).length;
}

function toBuffer(value: Buffer | string | null | undefined): Buffer {
  if (value === null || value === undefined) return Buffer.alloc(0);
  return typeof value === 'string' ? Buffer.from(value) : value;
}
