import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** Compiled to build/test/support/: the fixtures stay in the source tree. */
const FIXTURE_DIR = join(__dirname, '..', '..', '..', 'test', 'fixtures', 'pgoutput');

/** One row of pg_logical_slot_get_binary_changes, captured from a real PostgreSQL 15. */
export interface PgoutputFixtureMessage {
  readonly lsn: string;
  readonly xid: number;
  readonly data: Buffer;
}

export interface PgoutputFixture {
  readonly description: string;
  readonly sessionTimeZone: string;
  readonly messages: readonly PgoutputFixtureMessage[];
}

interface FixtureFile {
  description: string;
  sessionTimeZone: string;
  messages: { lsn: string; xid: number; hex: string }[];
}

/** Reads test/fixtures/pgoutput/<name>.json (data as hex) into Buffers. */
export function loadPgoutputFixture(name: string): PgoutputFixture {
  const file = JSON.parse(readFileSync(join(FIXTURE_DIR, `${name}.json`), 'utf8')) as FixtureFile;
  return {
    description: file.description,
    sessionTimeZone: file.sessionTimeZone,
    messages: file.messages.map((m) => ({ lsn: m.lsn, xid: m.xid, data: Buffer.from(m.hex, 'hex') })),
  };
}

/** A column value for buildTupleData: a string is a text value, null a NULL. */
export type TestValue = string | null | { unchanged: true } | { binary: Buffer };

export interface TestColumn {
  readonly name: string;
  readonly typeOid: number;
  readonly typeMod?: number;
  readonly key?: boolean;
}

function byte(value: number | string): Buffer {
  return Buffer.from([typeof value === 'string' ? value.charCodeAt(0) : value]);
}

function int16(value: number): Buffer {
  const buffer = Buffer.alloc(2);
  buffer.writeInt16BE(value);
  return buffer;
}

function int32(value: number): Buffer {
  const buffer = Buffer.alloc(4);
  buffer.writeInt32BE(value);
  return buffer;
}

function uint32(value: number): Buffer {
  const buffer = Buffer.alloc(4);
  buffer.writeUInt32BE(value);
  return buffer;
}

function uint64(value: bigint): Buffer {
  const buffer = Buffer.alloc(8);
  buffer.writeBigUInt64BE(value);
  return buffer;
}

function int64(value: bigint): Buffer {
  const buffer = Buffer.alloc(8);
  buffer.writeBigInt64BE(value);
  return buffer;
}

function cstring(text: string): Buffer {
  return Buffer.concat([Buffer.from(text, 'utf8'), byte(0)]);
}

/** TupleData: Int16 count, then 'n' | 'u' | 't' len bytes | 'b' len bytes per column. */
export function buildTupleData(values: readonly TestValue[]): Buffer {
  const parts = [int16(values.length)];
  for (const value of values) {
    if (value === null) parts.push(byte('n'));
    else if (typeof value === 'string') {
      const text = Buffer.from(value, 'utf8');
      parts.push(byte('t'), int32(text.length), text);
    } else if ('unchanged' in value) parts.push(byte('u'));
    else parts.push(byte('b'), int32(value.binary.length), value.binary);
  }
  return Buffer.concat(parts);
}

export function buildBegin(finalLsn: bigint, commitTime: bigint, xid: number): Buffer {
  return Buffer.concat([byte('B'), uint64(finalLsn), int64(commitTime), uint32(xid)]);
}

export function buildCommit(commitLsn: bigint, endLsn: bigint, commitTime: bigint, flags = 0): Buffer {
  return Buffer.concat([byte('C'), byte(flags), uint64(commitLsn), uint64(endLsn), int64(commitTime)]);
}

export function buildOrigin(commitLsn: bigint, name: string): Buffer {
  return Buffer.concat([byte('O'), uint64(commitLsn), cstring(name)]);
}

export function buildRelation(
  relationId: number,
  schema: string,
  name: string,
  columns: readonly TestColumn[],
  replicaIdentity = 'd',
): Buffer {
  return Buffer.concat([
    byte('R'),
    uint32(relationId),
    cstring(schema),
    cstring(name),
    byte(replicaIdentity),
    int16(columns.length),
    ...columns.flatMap((c) => [
      byte(c.key === true ? 1 : 0),
      cstring(c.name),
      uint32(c.typeOid),
      int32(c.typeMod ?? -1),
    ]),
  ]);
}

export function buildType(typeOid: number, schema: string, name: string): Buffer {
  return Buffer.concat([byte('Y'), uint32(typeOid), cstring(schema), cstring(name)]);
}

export function buildInsert(relationId: number, values: readonly TestValue[]): Buffer {
  return Buffer.concat([byte('I'), uint32(relationId), byte('N'), buildTupleData(values)]);
}

export function buildUpdate(
  relationId: number,
  values: readonly TestValue[],
  old?: { source: 'K' | 'O'; values: readonly TestValue[] },
): Buffer {
  const oldPart = old === undefined ? [] : [byte(old.source), buildTupleData(old.values)];
  return Buffer.concat([byte('U'), uint32(relationId), ...oldPart, byte('N'), buildTupleData(values)]);
}

export function buildDelete(relationId: number, source: 'K' | 'O', values: readonly TestValue[]): Buffer {
  return Buffer.concat([byte('D'), uint32(relationId), byte(source), buildTupleData(values)]);
}

export function buildTruncate(relationIds: readonly number[], options = 0): Buffer {
  return Buffer.concat([byte('T'), int32(relationIds.length), byte(options), ...relationIds.map(uint32)]);
}

export function buildLogicalMessage(
  transactional: boolean,
  lsn: bigint,
  prefix: string,
  content: Buffer,
): Buffer {
  return Buffer.concat([
    byte('M'),
    byte(transactional ? 1 : 0),
    uint64(lsn),
    cstring(prefix),
    int32(content.length),
    content,
  ]);
}

/** A CopyData chunk of the replication stream: 'w' header + pgoutput message. */
export function buildXLogData(dataStart: bigint, walEnd: bigint, sendTime: bigint, payload: Buffer): Buffer {
  return Buffer.concat([byte('w'), uint64(dataStart), uint64(walEnd), int64(sendTime), payload]);
}

export function buildKeepalive(walEnd: bigint, sendTime: bigint, replyRequested: boolean): Buffer {
  return Buffer.concat([byte('k'), uint64(walEnd), int64(sendTime), byte(replyRequested ? 1 : 0)]);
}
