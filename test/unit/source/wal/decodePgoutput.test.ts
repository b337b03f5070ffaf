import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { parseLsn } from '../../../../src/core/lsn.js';
import { toIsoTimestamp } from '../../../../src/core/formatPgTimestamp.js';
import { decodePgoutput } from '../../../../src/source/wal/pgoutput/decodePgoutput.js';
import { DecodeError } from '../../../../src/source/wal/pgoutput/decodeError.js';
import type { PgoutputMessage, TupleValue } from '../../../../src/source/wal/pgoutput/pgoutputMessage.js';
import { WalboxError } from '../../../../src/errors.js';
import {
  buildBegin,
  buildCommit,
  buildDelete,
  buildInsert,
  buildLogicalMessage,
  buildOrigin,
  buildRelation,
  buildTruncate,
  buildType,
  buildUpdate,
  loadPgoutputFixture,
} from '../../../support/pgoutputBuffers.js';

const OUTBOX_COLUMNS = [
  'id',
  'aggregate_type',
  'aggregate_id',
  'event_type',
  'payload',
  'headers',
  'created_at',
  'processed_at',
  'seq',
];
const FIXTURES = ['insert-single', 'insert-two-with-message', 'alter-add-column'];

type Tagged<T extends PgoutputMessage['tag']> = Extract<PgoutputMessage, { tag: T }>;

function expectTag<T extends PgoutputMessage['tag']>(
  message: PgoutputMessage | undefined,
  tag: T,
): Tagged<T> {
  assert.equal(message?.tag, tag);
  return message as Tagged<T>;
}

function decodeFixture(name: string): PgoutputMessage[] {
  return loadPgoutputFixture(name).messages.map((m) => decodePgoutput(m.data));
}

/** The text values of a tuple by column name; null for NULL. */
function rowOf(relation: Tagged<'relation'>, tuple: readonly TupleValue[]): Record<string, string | null> {
  assert.equal(tuple.length, relation.columns.length);
  return Object.fromEntries(
    relation.columns.map((column, i) => {
      const value = tuple[i];
      if (value?.kind === 'null') return [column.name, null];
      assert.equal(value?.kind, 'text', column.name);
      return [column.name, value.bytes.toString('utf8')];
    }),
  );
}

describe('decodePgoutput on bytes captured from PostgreSQL 15', () => {
  it('decodes a one-insert transaction with the exact text of every value', () => {
    const fixture = loadPgoutputFixture('insert-single');
    const messages = decodeFixture('insert-single');
    assert.deepEqual(
      messages.map((m) => m.tag),
      ['begin', 'relation', 'insert', 'commit'],
    );
    const begin = expectTag(messages[0], 'begin');
    const relation = expectTag(messages[1], 'relation');
    const insert = expectTag(messages[2], 'insert');
    const commit = expectTag(messages[3], 'commit');

    assert.equal(begin.xid, fixture.messages[0]?.xid);
    assert.equal(relation.schema, 'walbox');
    assert.equal(relation.name, 'outbox_events');
    assert.equal(relation.replicaIdentity, 'd');
    assert.deepEqual(
      relation.columns.map((c) => c.name),
      OUTBOX_COLUMNS,
    );
    assert.deepEqual(relation.columns[0], { flags: 1, name: 'id', typeOid: 2950, typeMod: -1 });
    // varchar(100): the type modifier is the length + 4 (VARHDRSZ).
    assert.deepEqual(relation.columns[1], { flags: 0, name: 'aggregate_type', typeOid: 1043, typeMod: 104 });
    assert.deepEqual(
      relation.columns.map((c) => c.typeOid),
      [2950, 1043, 1043, 1043, 3802, 3802, 1184, 1184, 20],
    );
    assert.equal(insert.relationId, relation.relationId);

    assert.deepEqual(rowOf(relation, insert.tuple), {
      id: '0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d',
      aggregate_type: 'order',
      aggregate_id: 'o-1',
      event_type: 'order.created',
      payload: '{"big": 12345678901234567890, "text": "héllo ✓ 😀", "quote": "say \\"hi\\" \\\\ done"}',
      headers: null,
      created_at: '2026-12-02 12:37:28.123456+00',
      processed_at: null,
      seq: '1',
    });
    assert.equal(toIsoTimestamp('2026-12-02 12:37:28.123456+00'), '2026-12-02T12:37:28.123456Z');

    assert.equal(commit.flags, 0);
    assert.equal(begin.finalLsn, commit.commitLsn);
    assert.equal(begin.commitTime, commit.commitTime);
    assert.ok(commit.endLsn > commit.commitLsn);
    // The SQL interface reports a Commit at the end of its record, the position walbox confirms.
    assert.equal(commit.endLsn, parseLsn(fixture.messages[3]?.lsn ?? ''));
    // Commit time is recent (µs since 2000): after 2020, before 2100.
    assert.ok(commit.commitTime > 631_152_000_000_000n && commit.commitTime < 3_155_760_000_000_000n);
  });

  it('decodes two inserts and a transactional logical message in one transaction', () => {
    const fixture = loadPgoutputFixture('insert-two-with-message');
    const messages = decodeFixture('insert-two-with-message');
    assert.deepEqual(
      messages.map((m) => m.tag),
      ['begin', 'relation', 'insert', 'message', 'insert', 'commit'],
    );
    const relation = expectTag(messages[1], 'relation');
    const first = rowOf(relation, expectTag(messages[2], 'insert').tuple);
    const second = rowOf(relation, expectTag(messages[4], 'insert').tuple);
    assert.equal(first['payload'], '{"n": 1}');
    assert.equal(first['headers'], '{"trace": "abc"}');
    assert.equal(second['payload'], '{"n": 2, "amount": 12.50}');
    assert.equal(second['headers'], null);
    assert.deepEqual([first['seq'], second['seq']], ['2', '3']);

    // The decoding session's TimeZone (Asia/Kolkata), not the inserting one's, decides the printed offset;
    // PostgreSQL drops trailing zeros of the fraction.
    assert.equal(fixture.sessionTimeZone, 'Asia/Kolkata');
    assert.equal(first['created_at'], '2026-12-02 18:07:28.1+05:30');
    assert.equal(second['created_at'], '2026-12-02 18:07:28+05:30');
    assert.equal(toIsoTimestamp(first['created_at'] ?? ''), '2026-12-02T12:37:28.100000Z');
    assert.equal(toIsoTimestamp(second['created_at'] ?? ''), '2026-12-02T12:37:28.000000Z');

    const message = expectTag(messages[3], 'message');
    assert.equal(message.transactional, true);
    assert.equal(message.prefix, 'walbox');
    assert.equal(message.content.toString('utf8'), 'in-tx');
    assert.equal(message.lsn, parseLsn(fixture.messages[3]?.lsn ?? ''));

    const begin = expectTag(messages[0], 'begin');
    const commit = expectTag(messages[5], 'commit');
    assert.equal(begin.finalLsn, commit.commitLsn);
    assert.ok(commit.endLsn > commit.commitLsn);
  });

  it('sees the new column in the Relation message sent after ALTER TABLE ADD COLUMN', () => {
    const messages = decodeFixture('alter-add-column');
    assert.deepEqual(
      messages.map((m) => m.tag),
      ['begin', 'relation', 'insert', 'commit', 'begin', 'relation', 'insert', 'commit'],
    );
    const before = expectTag(messages[1], 'relation');
    const after = expectTag(messages[5], 'relation');
    assert.equal(after.relationId, before.relationId);
    assert.deepEqual(
      before.columns.map((c) => c.name),
      OUTBOX_COLUMNS,
    );
    assert.deepEqual(
      after.columns.map((c) => c.name),
      [...OUTBOX_COLUMNS, 'trace_id'],
    );
    assert.deepEqual(after.columns[9], { flags: 0, name: 'trace_id', typeOid: 25, typeMod: -1 });

    const old = rowOf(before, expectTag(messages[2], 'insert').tuple);
    assert.equal(old['payload'], '{}');
    assert.equal(old['created_at'], '1999-12-31 23:59:59.999999+00');
    const added = rowOf(after, expectTag(messages[6], 'insert').tuple);
    assert.equal(added['payload'], '[]');
    assert.equal(added['trace_id'], 'trace-3');
    assert.equal(toIsoTimestamp(added['created_at'] ?? ''), '2026-12-02T12:37:28.000001Z');

    const firstCommit = expectTag(messages[3], 'commit');
    const secondCommit = expectTag(messages[7], 'commit');
    assert.ok(secondCommit.commitLsn >= firstCommit.endLsn, 'commit end LSNs are monotonic');
    assert.ok(secondCommit.endLsn > secondCommit.commitLsn);
  });

  it('throws a DecodeError naming the tag and offset for every truncation of a real message', () => {
    for (const name of FIXTURES) {
      for (const { data } of loadPgoutputFixture(name).messages) {
        const tag = String.fromCharCode(data[0] ?? 0);
        for (let length = 1; length < data.length; length++) {
          assert.throws(
            () => decodePgoutput(data.subarray(0, length)),
            (error: unknown) =>
              error instanceof DecodeError &&
              error.message.includes(`'${tag}'`) &&
              /offset \d+/.test(error.message),
            `${name} '${tag}' cut at ${length}`,
          );
        }
      }
    }
  });

  it('decodes an unknown tag to unknown instead of throwing', () => {
    const insert = loadPgoutputFixture('insert-single').messages[2]?.data ?? Buffer.alloc(0);
    const changed = Buffer.from(insert);
    changed[0] = 'Z'.charCodeAt(0);
    assert.deepEqual(decodePgoutput(changed), { tag: 'unknown', byte: 0x5a });
    // Stream Start: protocol version 2 with streaming, which we never request.
    assert.deepEqual(decodePgoutput(Buffer.from([0x53, 0, 0, 2, 0xd8, 1])), { tag: 'unknown', byte: 0x53 });
  });
});

describe('decodePgoutput on built messages', () => {
  it('decodes begin, commit, origin and type', () => {
    assert.deepEqual(decodePgoutput(buildBegin(0x1_0000_0010n, 123n, 0xffff_fffe)), {
      tag: 'begin',
      finalLsn: 0x1_0000_0010n,
      commitTime: 123n,
      xid: 0xffff_fffe,
    });
    assert.deepEqual(decodePgoutput(buildCommit(10n, 20n, -5n)), {
      tag: 'commit',
      flags: 0,
      commitLsn: 10n,
      endLsn: 20n,
      commitTime: -5n,
    });
    assert.deepEqual(decodePgoutput(buildOrigin(7n, 'node_a')), {
      tag: 'origin',
      commitLsn: 7n,
      name: 'node_a',
    });
    assert.deepEqual(decodePgoutput(buildType(3_000_000_000, 'public', 'mood')), {
      tag: 'type',
      typeOid: 3_000_000_000,
      schema: 'public',
      name: 'mood',
    });
  });

  it('reads relation ids and type OIDs above 2^31 as unsigned', () => {
    const relation = expectTag(
      decodePgoutput(buildRelation(0x8000_0001, '', 't', [{ name: 'c', typeOid: 0xffff_fff0 }], 'f')),
      'relation',
    );
    assert.equal(relation.relationId, 0x8000_0001);
    assert.equal(relation.schema, '');
    assert.equal(relation.replicaIdentity, 'f');
    assert.deepEqual(relation.columns, [{ flags: 0, name: 'c', typeOid: 0xffff_fff0, typeMod: -1 }]);
  });

  it('decodes every kind of tuple value', () => {
    const bytes = Buffer.from([0, 1, 2, 255]);
    const insert = expectTag(
      decodePgoutput(buildInsert(5, ['', 'ü', null, { unchanged: true }, { binary: bytes }])),
      'insert',
    );
    assert.deepEqual(insert.tuple, [
      { kind: 'text', bytes: Buffer.from('') },
      { kind: 'text', bytes: Buffer.from('ü') },
      { kind: 'null' },
      { kind: 'unchanged' },
      { kind: 'binary', bytes },
    ]);
  });

  it('decodes update, delete and truncate far enough to skip them safely', () => {
    assert.deepEqual(decodePgoutput(buildUpdate(9, ['new'])), {
      tag: 'update',
      relationId: 9,
      old: null,
      tuple: [{ kind: 'text', bytes: Buffer.from('new') }],
    });
    const update = expectTag(
      decodePgoutput(buildUpdate(9, ['new', { unchanged: true }], { source: 'O', values: ['old', 'x'] })),
      'update',
    );
    assert.equal(update.old?.source, 'old');
    assert.equal(update.tuple[1]?.kind, 'unchanged');
    assert.deepEqual(decodePgoutput(buildDelete(9, 'K', ['k'])), {
      tag: 'delete',
      relationId: 9,
      old: { source: 'key', tuple: [{ kind: 'text', bytes: Buffer.from('k') }] },
    });
    assert.deepEqual(decodePgoutput(buildTruncate([1, 2], 3)), {
      tag: 'truncate',
      options: 3,
      relationIds: [1, 2],
    });
  });

  it('copies the values of a tuple out of the payload buffer, which the socket parser reuses', () => {
    const payload = buildInsert(5, ['first', 'ü', { binary: Buffer.from([7, 8]) }]);
    const insert = expectTag(decodePgoutput(payload), 'insert');
    payload.fill(0);
    assert.deepEqual(insert.tuple, [
      { kind: 'text', bytes: Buffer.from('first') },
      { kind: 'text', bytes: Buffer.from('ü') },
      { kind: 'binary', bytes: Buffer.from([7, 8]) },
    ]);
  });

  it('copies the content of a logical message out of the payload buffer', () => {
    const payload = buildLogicalMessage(false, 42n, 'p', Buffer.from('abc'));
    const message = expectTag(decodePgoutput(payload), 'message');
    payload.fill(0);
    assert.equal(message.transactional, false);
    assert.equal(message.lsn, 42n);
    assert.equal(message.content.toString(), 'abc');
  });

  it('rejects malformed messages with a DecodeError', () => {
    const cases: readonly [string, Buffer][] = [
      ['empty', Buffer.alloc(0)],
      ['trailing bytes', Buffer.concat([buildCommit(1n, 2n, 3n), Buffer.from([0])])],
      ['unknown value kind', Buffer.from([...buildInsert(1, []).subarray(0, 6), 0, 1, 0x78])],
      ['insert without N', Buffer.from([0x49, 0, 0, 0, 1, 0x4b, 0, 0])],
      ['invalid UTF-8', Buffer.from([0x49, 0, 0, 0, 1, 0x4e, 0, 1, 0x74, 0, 0, 0, 1, 0xff])],
      ['negative length', Buffer.from([0x49, 0, 0, 0, 1, 0x4e, 0, 1, 0x74, 0xff, 0xff, 0xff, 0xff])],
      ['unterminated string', Buffer.from([0x4f, 0, 0, 0, 0, 0, 0, 0, 1, 0x61])],
      ['update with a bad marker', Buffer.from([0x55, 0, 0, 0, 1, 0x58])],
    ];
    for (const [label, payload] of cases) {
      assert.throws(
        () => decodePgoutput(payload),
        (error: unknown) =>
          error instanceof DecodeError &&
          error instanceof WalboxError &&
          error.code === 'DECODE_FAILED' &&
          !error.retriable,
        label,
      );
    }
  });
});
