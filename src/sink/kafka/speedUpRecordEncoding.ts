import Encoder from 'kafkajs/src/protocol/encoder';

const PATCHED = Symbol.for('walbox.recordEncodingSpedUp');

/** A header fits; a small record grows once. Taken from Node's shared buffer pool, so small sizes are cheap. */
const FIRST_SIZE = 128;

/** Up to this magnitude a zigzag-encoded varlong is an exact double (2 × 2^51 = 2^52 < 2^53). */
const SAFE_VARLONG = 2 ** 51;

/**
 * kafkajs 2.2.4 encodes a produce request with one Encoder per record and one per header, and every Encoder
 * starts with a zero-filled 512-byte buffer of its own: a fresh allocation outside the heap each time, about a
 * third of the encoding's CPU. Every varint goes through a Buffer made from an array, and every varlong through
 * BigInt arithmetic. An Encoder only writes at its offset, after reserving the room, and hands out only the
 * bytes written (kafkajs reads neither `buf` nor `offset` anywhere else), so its buffer need not be zeroed:
 * Encoders here start empty and take their room from Node's buffer pool, and varints are written in place.
 * The bytes on the wire do not change; the unit test compares them with unpatched kafkajs on whole produce
 * requests. Idempotent; patches the class, so kafkajs clients the host application builds from the same copy
 * of kafkajs get it too.
 */
export function speedUpRecordEncoding(): void {
  const patchable = Encoder as typeof Encoder & { [PATCHED]?: true };
  if (patchable[PATCHED] === true) return;
  const prototype = Encoder.prototype;
  const { writeVarLong } = prototype;
  const { sizeOfVarLong } = Encoder;
  // Another kafkajs than the pinned one: leave it alone (the unit test says whether the patch still holds).
  if (typeof writeVarLong !== 'function' || typeof sizeOfVarLong !== 'function') return;

  // In 2.2.4 the constructor is the only caller left once ensureAvailable is replaced: it allocates
  // `Buffer.alloc(Encoder.nextPowerOfTwo(initialSize))`, which becomes an empty buffer.
  Encoder.nextPowerOfTwo = () => 0;

  prototype.ensureAvailable = function ensureAvailable(this: Encoder, length: number): void {
    const needed = this.offset + length;
    if (needed <= this.buf.length) return;
    let size = Math.max(FIRST_SIZE, this.buf.length);
    while (size < needed) size *= 2;
    const grown = Buffer.allocUnsafe(size);
    this.buf.copy(grown, 0, 0, this.offset);
    this.buf = grown;
  };

  // The same integer operations as kafkajs's, without the intermediate array and Buffer.
  prototype.writeUVarInt = function writeUVarInt(this: Encoder, value: number): Encoder {
    this.ensureAvailable(5);
    let rest = value;
    while ((rest & 0xffffff80) !== 0) {
      this.buf[this.offset++] = (rest & 0x7f) | 0x80;
      rest >>>= 7;
    }
    this.buf[this.offset++] = rest & 0x7f;
    return this;
  };

  // Record timestamp deltas are small integers; anything else takes kafkajs's own BigInt path.
  prototype.writeVarLong = function writeSmallVarLong(
    this: Encoder,
    value: number | bigint | string,
  ): Encoder {
    if (!isSafeVarLong(value)) return writeVarLong.call(this, value);
    let rest = encodeZigZag(value);
    this.ensureAvailable(8);
    while (rest >= 0x80) {
      this.buf[this.offset++] = (rest % 0x80) | 0x80;
      rest = Math.floor(rest / 0x80);
    }
    this.buf[this.offset++] = rest;
    return this;
  };

  Encoder.sizeOfVarLong = function sizeOfSmallVarLong(value: number | bigint | string): number {
    if (!isSafeVarLong(value)) return sizeOfVarLong.call(Encoder, value);
    let rest = encodeZigZag(value);
    let bytes = 1;
    while (rest >= 0x80) {
      bytes += 1;
      rest = Math.floor(rest / 0x80);
    }
    return bytes;
  };

  patchable[PATCHED] = true;
}

function isSafeVarLong(value: unknown): value is number {
  return Number.isSafeInteger(value) && Math.abs(value as number) <= SAFE_VARLONG;
}

function encodeZigZag(value: number): number {
  return value >= 0 ? value * 2 : -value * 2 - 1;
}
