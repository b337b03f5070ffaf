import { isUtf8 } from 'node:buffer';

import { DecodeError } from './decodeError.js';

// Fatal: a value that is not valid UTF-8 means the connection's client_encoding is not UTF8, and replacing bytes
// with U+FFFD would silently change the events we publish.
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** Reads big-endian protocol fields from a Buffer; every read is bounds-checked and throws a DecodeError. */
export class BufferReader {
  private position = 0;
  /** The source, copied on the first readBytes: every value read then shares this one copy. */
  private copy: Buffer | undefined;

  constructor(private readonly buffer: Buffer) {}

  /** Where the next read starts, for error messages. */
  get offset(): number {
    return this.position;
  }

  remaining(): number {
    return this.buffer.length - this.position;
  }

  readUInt8(): number {
    return this.buffer.readUInt8(this.claim(1));
  }

  readInt16(): number {
    return this.buffer.readInt16BE(this.claim(2));
  }

  readInt32(): number {
    return this.buffer.readInt32BE(this.claim(4));
  }

  /** OIDs and xids are unsigned 32-bit: read as Int32 they turn negative past 2^31. */
  readUInt32(): number {
    return this.buffer.readUInt32BE(this.claim(4));
  }

  readInt64(): bigint {
    return this.buffer.readBigInt64BE(this.claim(8));
  }

  readUInt64(): bigint {
    return this.buffer.readBigUInt64BE(this.claim(8));
  }

  /** A NUL-terminated UTF-8 string; the NUL is consumed. */
  readCString(): string {
    const start = this.position;
    const end = this.buffer.indexOf(0, start);
    if (end === -1) throw new DecodeError(`unterminated string at offset ${start}`);
    const text = this.decodeUtf8(start, end);
    this.position = end + 1;
    return text;
  }

  /** `length` bytes of UTF-8 text, checked as readCString checks its text, as a copy (see readBytes). */
  readUtf8Bytes(length: number): Buffer {
    const start = this.position;
    const bytes = this.readBytes(length);
    if (!isUtf8(bytes)) throw new DecodeError(`invalid UTF-8 at offset ${start}`);
    return bytes;
  }

  /**
   * A view of a copy of the source, which may belong to the socket parser that reuses it for the next chunk. The
   * source is copied once, however many values are read from it: one copy per message, not one per column.
   */
  readBytes(length: number): Buffer {
    const start = this.claim(length);
    this.copy ??= Buffer.from(this.buffer);
    return this.copy.subarray(start, start + length);
  }

  private claim(length: number): number {
    const start = this.position;
    if (!Number.isInteger(length) || length < 0) {
      throw new DecodeError(`invalid length ${length} at offset ${start}`);
    }
    if (length > this.remaining()) {
      throw new DecodeError(`need ${length} bytes at offset ${start}, only ${this.remaining()} left`);
    }
    this.position += length;
    return start;
  }

  private decodeUtf8(start: number, end: number): string {
    try {
      return utf8.decode(this.buffer.subarray(start, end));
    } catch (error) {
      throw new DecodeError(`invalid UTF-8 at offset ${start}`, { cause: error });
    }
  }
}
