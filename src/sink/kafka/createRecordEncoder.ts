import Encoder from 'kafkajs/src/protocol/encoder';
import type { RecordArgs, RecordEncoder } from 'kafkajs/src/protocol/recordBatch/record/v0';

import { wrapInEncoder } from './wrapInEncoder.js';

type Bytes = string | Buffer;

/** The byte lengths of one record's header names and values, in order: reused, as encoding is synchronous. */
const headerLengths: number[] = [];

/**
 * kafkajs 2.2.4's record (v2 format) written into one buffer. kafkajs builds each record from an Encoder of its
 * own plus one per header, each with a buffer of its own, and copies them together: for walbox's five headers,
 * seven encoders and about twenty Buffer objects per record, half of the encoding's CPU. Here the sizes are
 * computed first (by kafkajs's own formula, so the length prefix is the one kafkajs writes) and every field goes
 * straight into one buffer of exactly that size. Anything but string or Buffer keys, values and header values
 * (header arrays, null headers, numbers) goes to kafkajs's own `fallback`, as does a record whose bytes would not
 * match the size computed: the same bytes, or the same error, as kafkajs in every case.
 */
export function createRecordEncoder(fallback: RecordEncoder): RecordEncoder {
  return function encodeRecord(args: RecordArgs): Encoder {
    const { offsetDelta = 0, timestampDelta = 0, key, value, headers = {} } = args;
    if (!isNullableBytes(key) || !isNullableBytes(value) || typeof headers !== 'object' || headers === null) {
      return fallback(args);
    }
    const names = Object.keys(headers);
    let headersSize = Encoder.sizeOfVarInt(names.length);
    for (let i = 0; i < names.length; i++) {
      const name = names[i] as string;
      const headerValue = (headers as Record<string, unknown>)[name];
      if (!isBytes(headerValue)) return fallback(args);
      const nameLength = Buffer.byteLength(name);
      const valueLength = byteLength(headerValue);
      headerLengths[2 * i] = nameLength;
      headerLengths[2 * i + 1] = valueLength;
      headersSize +=
        Encoder.sizeOfVarInt(nameLength) + nameLength + Encoder.sizeOfVarInt(valueLength) + valueLength;
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
    const totalSize = Encoder.sizeOfVarInt(bodySize) + bodySize;

    // Exactly the record's size, and every byte written (checked below): kafkajs's encoder would allocate 512
    // zeroed bytes and, for a larger record, the next power of two; small records share Node's buffer pool.
    const encoder = wrapInEncoder(Buffer.allocUnsafe(totalSize), 0);
    encoder.writeVarInt(bodySize).writeInt8(0).writeVarLong(timestampDelta).writeVarInt(offsetDelta);
    writeField(encoder, key, keyLength);
    writeField(encoder, value, valueLength);
    encoder.writeVarInt(names.length);
    for (let i = 0; i < names.length; i++) {
      const name = names[i] as string;
      writeField(encoder, name, headerLengths[2 * i] as number);
      writeField(encoder, (headers as Record<string, Bytes>)[name], headerLengths[2 * i + 1] as number);
    }
    // A mismatch would mean a length prefix that lies: let kafkajs encode it its own way instead.
    return encoder.offset === totalSize ? encoder : fallback(args);
  };
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
 * Room for it was ensured up front, so the bytes go in place; string bytes are UTF-8, as kafkajs writes them. The
 * offset moves by the bytes actually written, so that the size check catches a short write: the buffer is not
 * zeroed, and a byte not written must never be sent.
 */
function writeField(encoder: Encoder, value: Bytes | null | undefined, length: number): void {
  encoder.writeVarInt(length);
  if (value == null || length <= 0) return;
  encoder.offset +=
    typeof value === 'string'
      ? encoder.buf.write(value, encoder.offset, length, 'utf8')
      : value.copy(encoder.buf, encoder.offset);
}
