import Encoder from 'kafkajs/src/protocol/encoder';
import type { RecordArgs, RecordEncoder } from 'kafkajs/src/protocol/recordBatch/record/v0';

import { wrapInEncoder } from './wrapInEncoder.js';

type Bytes = string | Buffer;

/**
 * Room a buffer must have behind a record's last byte for writeRecord: walbox's Encoder patch reserves up to 8
 * bytes for a varlong (5 for a varint) before it writes fewer, and an Encoder short of room grows into a new
 * buffer.
 */
export const RECORD_SPARE_BYTES = 8;

/**
 * A record (v2 format) whose every field is a string or a Buffer, measured: `size` is the bytes writeRecord
 * writes, computed by kafkajs's own formula, so the length prefix is the one kafkajs writes.
 */
export interface MeasuredRecord {
  readonly size: number;
  readonly bodySize: number;
  readonly offsetDelta: number;
  readonly timestampDelta: number;
  readonly key: Bytes | null | undefined;
  readonly keyLength: number;
  readonly value: Bytes | null | undefined;
  readonly valueLength: number;
  readonly headers: Readonly<Record<string, Bytes>>;
  readonly headerNames: readonly string[];
  /** The byte lengths of the header names and values, in order. */
  readonly headerLengths: readonly number[];
}

/**
 * kafkajs 2.2.4's record (v2 format) written into one buffer. kafkajs builds each record from an Encoder of its
 * own plus one per header, each with a buffer of its own, and copies them together: for walbox's five headers,
 * seven encoders and about twenty Buffer objects per record, half of the encoding's CPU. Here a record is
 * measured first (measureRecord) and every field goes straight into a buffer of that size, with the spare bytes
 * behind it. Anything but string or Buffer keys, values and header values (header arrays, null headers, numbers)
 * goes to kafkajs's own `fallback`, as does a record whose bytes would not match the size computed: the same
 * bytes, or the same error, as kafkajs in every case. The produce request (speedUpProduceRequest) writes measured
 * records straight into its own buffer instead.
 */
export function createRecordEncoder(fallback: RecordEncoder): RecordEncoder {
  return function encodeRecord(args: RecordArgs): Encoder {
    const record = measureRecord(args);
    if (record === undefined) return fallback(args);
    // The record's size, and every byte of it written (checked): kafkajs's encoder would allocate 512 zeroed
    // bytes and, for a larger record, the next power of two; small records share Node's buffer pool.
    const encoder = wrapInEncoder(Buffer.allocUnsafe(record.size + RECORD_SPARE_BYTES), 0);
    return writeRecord(record, encoder) ? encoder : fallback(args);
  };
}

/** The record measured, or undefined when a field is not a string or a Buffer (kafkajs's encoder takes it). */
export function measureRecord(args: RecordArgs): MeasuredRecord | undefined {
  const { offsetDelta = 0, timestampDelta = 0, key, value, headers = {} } = args;
  if (!isNullableBytes(key) || !isNullableBytes(value) || typeof headers !== 'object' || headers === null) {
    return undefined;
  }
  const headerNames = Object.keys(headers);
  const headerLengths: number[] = [];
  let headersSize = Encoder.sizeOfVarInt(headerNames.length);
  for (const name of headerNames) {
    const headerValue = (headers as Record<string, unknown>)[name];
    if (!isBytes(headerValue)) return undefined;
    const nameLength = Buffer.byteLength(name);
    const valueLength = byteLength(headerValue);
    headerLengths.push(nameLength, valueLength);
    headersSize += sizeOfField(nameLength) + sizeOfField(valueLength);
  }
  const keyLength = key == null ? -1 : byteLength(key);
  const valueLength = value == null ? -1 : byteLength(value);
  const bodySize =
    1 + // attributes
    Encoder.sizeOfVarLong(timestampDelta) +
    Encoder.sizeOfVarInt(offsetDelta) +
    sizeOfField(keyLength) +
    sizeOfField(valueLength) +
    headersSize;
  return {
    size: Encoder.sizeOfVarInt(bodySize) + bodySize,
    bodySize,
    offsetDelta,
    timestampDelta,
    key,
    keyLength,
    value,
    valueLength,
    headers: headers as Record<string, Bytes>,
    headerNames,
    headerLengths,
  };
}

/**
 * Writes the record at the encoder's offset, into room its buffer already has (with RECORD_SPARE_BYTES behind).
 * True when exactly `size` bytes went into that buffer; false means a length prefix would lie (the buffer is not
 * zeroed, and a byte not written must never be sent): the caller then lets kafkajs encode the record its own way.
 */
export function writeRecord(record: MeasuredRecord, encoder: Encoder): boolean {
  const { buf: bytes, offset: start } = encoder;
  encoder.writeVarInt(record.bodySize).writeInt8(0);
  encoder.writeVarLong(record.timestampDelta).writeVarInt(record.offsetDelta);
  writeField(encoder, record.key, record.keyLength);
  writeField(encoder, record.value, record.valueLength);
  const { headers, headerNames, headerLengths } = record;
  encoder.writeVarInt(headerNames.length);
  for (let i = 0; i < headerNames.length; i++) {
    const name = headerNames[i] as string;
    writeField(encoder, name, headerLengths[2 * i] as number);
    writeField(encoder, headers[name], headerLengths[2 * i + 1] as number);
  }
  return encoder.buf === bytes && encoder.offset === start + record.size;
}

function isBytes(value: unknown): value is Bytes {
  return typeof value === 'string' || Buffer.isBuffer(value);
}

function isNullableBytes(value: unknown): value is Bytes | null | undefined {
  return value == null || isBytes(value);
}

function byteLength(value: Bytes): number {
  return typeof value === 'string' ? Buffer.byteLength(value) : value.length;
}

/** A varint length (-1 for null) and the bytes. */
function sizeOfField(length: number): number {
  return Encoder.sizeOfVarInt(length) + Math.max(length, 0);
}

/**
 * The bytes go in place, as room was ensured up front; string bytes are UTF-8, as kafkajs writes them. The offset
 * moves by the bytes actually written, so that a short write shows in writeRecord's check.
 */
function writeField(encoder: Encoder, value: Bytes | null | undefined, length: number): void {
  encoder.writeVarInt(length);
  if (value == null || length <= 0) return;
  encoder.offset +=
    typeof value === 'string'
      ? encoder.buf.write(value, encoder.offset, length, 'utf8')
      : value.copy(encoder.buf, encoder.offset);
}
