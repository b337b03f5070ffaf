import { BufferReader } from './bufferReader.js';
import { DecodeError } from './decodeError.js';

/** 2000-01-01T00:00:00Z in Unix milliseconds: PostgreSQL's epoch for protocol timestamps. */
const PG_EPOCH_MS = 946_684_800_000;

/** A protocol timestamp (microseconds since 2000-01-01 UTC) as Unix milliseconds. */
export function toUnixMs(pgMicros: bigint): number {
  return PG_EPOCH_MS + Number(pgMicros / 1000n);
}
const MAX_UINT64 = (1n << 64n) - 1n;
const STANDBY_STATUS_UPDATE_BYTES = 34;

export type XLogHeader =
  | {
      readonly kind: 'xlogdata';
      readonly dataStart: bigint;
      readonly walEnd: bigint;
      /** Microseconds since 2000-01-01 00:00:00 UTC. */
      readonly sendTime: bigint;
      /** The pgoutput message. */
      readonly payload: Buffer;
    }
  | {
      readonly kind: 'keepalive';
      readonly walEnd: bigint;
      readonly sendTime: bigint;
      readonly replyRequested: boolean;
    }
  | { readonly kind: 'other'; readonly byte: number };

/**
 * The Standby status update ('r') that confirms `flushLsn`. flush = apply = flushLsn exactly: a logical slot only
 * reads flush, and we confirm commit end LSNs, where the next transaction's commit record may start, so
 * flushLsn + 1 could make the server skip that transaction after a restart. write is what has been received
 * (at least flushLsn): a walsender that is shutting down waits until write reaches what it sent.
 */
export function buildStandbyStatusUpdate(
  flushLsn: bigint,
  now: Date,
  replyRequested = false,
  writeLsn: bigint = flushLsn,
): Buffer {
  if (flushLsn < 0n || flushLsn > MAX_UINT64) throw new RangeError(`LSN out of range: ${flushLsn}`);
  const written = writeLsn > flushLsn ? writeLsn : flushLsn;
  if (written > MAX_UINT64) throw new RangeError(`LSN out of range: ${written}`);
  const nowMs = now.getTime();
  if (!Number.isFinite(nowMs)) throw new RangeError('invalid clock time');
  const message = Buffer.alloc(STANDBY_STATUS_UPDATE_BYTES);
  message.write('r', 0, 'latin1');
  message.writeBigUInt64BE(written, 1);
  message.writeBigUInt64BE(flushLsn, 9);
  message.writeBigUInt64BE(flushLsn, 17);
  message.writeBigInt64BE(BigInt(nowMs - PG_EPOCH_MS) * 1000n, 25);
  message.writeUInt8(replyRequested ? 1 : 0, 33);
  return message;
}

/** Splits a CopyData chunk of the replication stream into XLogData ('w'), primary keepalive ('k') or other. */
export function parseXLogHeader(chunk: Buffer): XLogHeader {
  const reader = new BufferReader(chunk);
  try {
    const byte = reader.readUInt8();
    switch (String.fromCharCode(byte)) {
      case 'w': {
        const dataStart = reader.readUInt64();
        const walEnd = reader.readUInt64();
        const sendTime = reader.readInt64();
        // A copy: pg-protocol reuses the chunk's memory for the next socket read, and messages get queued.
        return {
          kind: 'xlogdata',
          dataStart,
          walEnd,
          sendTime,
          payload: reader.readBytes(reader.remaining()),
        };
      }
      case 'k': {
        const walEnd = reader.readUInt64();
        const sendTime = reader.readInt64();
        const replyRequested = reader.readUInt8() === 1;
        return { kind: 'keepalive', walEnd, sendTime, replyRequested };
      }
      default:
        return { kind: 'other', byte };
    }
  } catch (error) {
    if (!(error instanceof DecodeError)) throw error;
    throw new DecodeError(`malformed replication message (${chunk.length} bytes): ${error.message}`, {
      cause: error,
    });
  }
}
