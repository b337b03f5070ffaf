import { BufferReader } from './bufferReader.js';
import { DecodeError } from './decodeError.js';
import type { OldTuple, PgoutputMessage, RelationColumn, TupleValue } from './pgoutputMessage.js';

type KnownMessage = Exclude<PgoutputMessage, { tag: 'unknown' }>;

const DECODERS: Readonly<Record<string, (reader: BufferReader) => KnownMessage>> = {
  B: decodeBegin,
  C: decodeCommit,
  O: decodeOrigin,
  R: decodeRelation,
  Y: decodeType,
  I: decodeInsert,
  U: decodeUpdate,
  D: decodeDelete,
  T: decodeTruncate,
  M: decodeLogicalMessage,
};

/**
 * Decodes one pgoutput message (protocol version 1): the data of an XLogData message after its 25-byte header.
 * Malformed input throws a DecodeError; a tag we do not know decodes to `unknown` so that the caller decides.
 */
export function decodePgoutput(payload: Buffer): PgoutputMessage {
  const reader = new BufferReader(payload);
  if (reader.remaining() === 0) throw new DecodeError('empty pgoutput message');
  const byte = reader.readUInt8();
  const tag = String.fromCharCode(byte);
  const decode = DECODERS[tag];
  if (decode === undefined) return { tag: 'unknown', byte };
  try {
    const message = decode(reader);
    // Leftover bytes mean our idea of the layout is wrong, and then the fields we did read may be wrong too.
    if (reader.remaining() > 0) {
      throw new DecodeError(`${reader.remaining()} unexpected bytes at offset ${reader.offset}`);
    }
    return message;
  } catch (error) {
    if (!(error instanceof DecodeError)) throw error;
    throw new DecodeError(`malformed pgoutput '${tag}' message (${payload.length} bytes): ${error.message}`, {
      cause: error,
    });
  }
}

function decodeBegin(reader: BufferReader): KnownMessage {
  const finalLsn = reader.readUInt64();
  const commitTime = reader.readInt64();
  const xid = reader.readUInt32();
  return { tag: 'begin', finalLsn, commitTime, xid };
}

function decodeCommit(reader: BufferReader): KnownMessage {
  const flags = reader.readUInt8();
  const commitLsn = reader.readUInt64();
  const endLsn = reader.readUInt64();
  const commitTime = reader.readInt64();
  return { tag: 'commit', flags, commitLsn, endLsn, commitTime };
}

function decodeOrigin(reader: BufferReader): KnownMessage {
  const commitLsn = reader.readUInt64();
  const name = reader.readCString();
  return { tag: 'origin', commitLsn, name };
}

function decodeRelation(reader: BufferReader): KnownMessage {
  const relationId = reader.readUInt32();
  const schema = reader.readCString();
  const name = reader.readCString();
  const replicaIdentity = String.fromCharCode(reader.readUInt8());
  const count = readCount(reader);
  const columns: RelationColumn[] = [];
  for (let i = 0; i < count; i++) {
    const flags = reader.readUInt8();
    const columnName = reader.readCString();
    const typeOid = reader.readUInt32();
    const typeMod = reader.readInt32();
    columns.push({ flags, name: columnName, typeOid, typeMod });
  }
  return { tag: 'relation', relationId, schema, name, replicaIdentity, columns };
}

function decodeType(reader: BufferReader): KnownMessage {
  const typeOid = reader.readUInt32();
  const schema = reader.readCString();
  const name = reader.readCString();
  return { tag: 'type', typeOid, schema, name };
}

function decodeInsert(reader: BufferReader): KnownMessage {
  const relationId = reader.readUInt32();
  expectByte(reader, 'N');
  return { tag: 'insert', relationId, tuple: readTuple(reader) };
}

function decodeUpdate(reader: BufferReader): KnownMessage {
  const relationId = reader.readUInt32();
  const offset = reader.offset;
  const marker = String.fromCharCode(reader.readUInt8());
  let old: OldTuple | null = null;
  if (marker === 'K' || marker === 'O') {
    old = { source: marker === 'K' ? 'key' : 'old', tuple: readTuple(reader) };
    expectByte(reader, 'N');
  } else if (marker !== 'N') {
    throw new DecodeError(`expected 'K', 'O' or 'N' at offset ${offset}, got ${describeByte(marker)}`);
  }
  return { tag: 'update', relationId, old, tuple: readTuple(reader) };
}

function decodeDelete(reader: BufferReader): KnownMessage {
  const relationId = reader.readUInt32();
  const offset = reader.offset;
  const marker = String.fromCharCode(reader.readUInt8());
  if (marker !== 'K' && marker !== 'O') {
    throw new DecodeError(`expected 'K' or 'O' at offset ${offset}, got ${describeByte(marker)}`);
  }
  return {
    tag: 'delete',
    relationId,
    old: { source: marker === 'K' ? 'key' : 'old', tuple: readTuple(reader) },
  };
}

function decodeTruncate(reader: BufferReader): KnownMessage {
  const offset = reader.offset;
  const count = reader.readInt32();
  if (count < 0) throw new DecodeError(`negative relation count ${count} at offset ${offset}`);
  const options = reader.readUInt8();
  const relationIds: number[] = [];
  for (let i = 0; i < count; i++) relationIds.push(reader.readUInt32());
  return { tag: 'truncate', options, relationIds };
}

function decodeLogicalMessage(reader: BufferReader): KnownMessage {
  const flags = reader.readUInt8();
  const lsn = reader.readUInt64();
  const prefix = reader.readCString();
  const offset = reader.offset;
  const length = reader.readInt32();
  if (length < 0) throw new DecodeError(`negative content length ${length} at offset ${offset}`);
  return { tag: 'message', transactional: (flags & 1) === 1, lsn, prefix, content: reader.readBytes(length) };
}

/** TupleData: Int16 column count, then per column a kind byte and, for 't' and 'b', Int32 length + bytes. */
function readTuple(reader: BufferReader): TupleValue[] {
  const count = readCount(reader);
  const values: TupleValue[] = [];
  for (let i = 0; i < count; i++) {
    const offset = reader.offset;
    const kind = String.fromCharCode(reader.readUInt8());
    switch (kind) {
      case 'n':
        values.push({ kind: 'null' });
        break;
      case 'u':
        values.push({ kind: 'unchanged' });
        break;
      case 't':
        values.push({ kind: 'text', bytes: reader.readUtf8Bytes(readLength(reader)) });
        break;
      case 'b':
        values.push({ kind: 'binary', bytes: reader.readBytes(readLength(reader)) });
        break;
      default:
        throw new DecodeError(`unknown value kind ${describeByte(kind)} for column ${i} at offset ${offset}`);
    }
  }
  return values;
}

function readCount(reader: BufferReader): number {
  const offset = reader.offset;
  const count = reader.readInt16();
  if (count < 0) throw new DecodeError(`negative column count ${count} at offset ${offset}`);
  return count;
}

function readLength(reader: BufferReader): number {
  const offset = reader.offset;
  const length = reader.readInt32();
  if (length < 0) throw new DecodeError(`negative value length ${length} at offset ${offset}`);
  return length;
}

function expectByte(reader: BufferReader, expected: string): void {
  const offset = reader.offset;
  const actual = String.fromCharCode(reader.readUInt8());
  if (actual !== expected) {
    throw new DecodeError(`expected '${expected}' at offset ${offset}, got ${describeByte(actual)}`);
  }
}

function describeByte(char: string): string {
  return `0x${char.charCodeAt(0).toString(16).padStart(2, '0')}`;
}
