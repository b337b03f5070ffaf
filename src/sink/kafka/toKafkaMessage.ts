import { gzipSync } from 'node:zlib';

import type { Message } from 'kafkajs';

import type { OutboxRecord } from '../../core/outboxRecord.js';
import { DEFAULT_HEADER_LAYOUT, toEventHeaders, type HeaderLayout } from '../../core/toEventHeaders.js';
import type { KafkaTimestamp, RelayConfig } from '../../config/relayConfig.js';

/** Record batch header plus per-record framing, generously rounded (v2 format: 61-byte batch header). */
const BATCH_OVERHEAD_BYTES = 61;
const RECORD_OVERHEAD_BYTES = 32;
const HEADER_OVERHEAD_BYTES = 10;

/** How records become messages: their headers and the record timestamp. */
export interface MessageLayout {
  readonly headers: HeaderLayout;
  readonly timestamp: KafkaTimestamp;
}

export const DEFAULT_MESSAGE_LAYOUT: MessageLayout = { headers: DEFAULT_HEADER_LAYOUT, timestamp: 'event' };

/** The layout the configuration asks for. */
export function toMessageLayout(
  config: Pick<RelayConfig, 'metadataHeaders' | 'headerColumns' | 'kafkaTimestamp'>,
): MessageLayout {
  return {
    headers: { metadata: config.metadataHeaders, columnHeaders: config.headerColumns.map((h) => h.header) },
    timestamp: config.kafkaTimestamp,
  };
}

/**
 * Key aggregate_id (same partition as a Java producer would pick), value the payload's text. Without a
 * timestamp kafkajs stamps the send time: so it goes for `send`, and for an event with no usable instant.
 */
export function toKafkaMessage(
  record: OutboxRecord,
  layout: MessageLayout = DEFAULT_MESSAGE_LAYOUT,
): Message {
  const message: Message = {
    key: record.aggregateId,
    value: record.payload,
    headers: toEventHeaders(record, layout.headers),
  };
  const timestamp = chooseTimestamp(record, layout.timestamp);
  if (timestamp !== undefined) message.timestamp = String(timestamp);
  return message;
}

function chooseTimestamp(record: OutboxRecord, choice: KafkaTimestamp): number | undefined {
  switch (choice) {
    case 'send':
      return undefined;
    case 'commit':
      // Rows read from the table (poll mode, catch-up, replay, dlq retry) have no commit time at hand.
      return record.committedAtMs ?? record.eventTimeMs;
    case 'event':
      return record.eventTimeMs;
  }
}

/** An upper estimate of the bytes one message adds to a record batch (uncompressed). */
export function estimateMessageBytes(message: Message): number {
  let bytes = RECORD_OVERHEAD_BYTES + byteLength(message.key) + byteLength(message.value);
  const headers = message.headers ?? {};
  for (const name of Object.keys(headers)) {
    const value = headers[name];
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
