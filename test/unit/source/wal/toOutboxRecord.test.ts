import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { decodePgoutput } from '../../../../src/source/wal/pgoutput/decodePgoutput.js';
import { OutboxRelation } from '../../../../src/source/wal/toOutboxRecord.js';
import { buildInsert, buildRelation, type TestValue } from '../../../support/pgoutputBuffers.js';
import { DEFAULT_COLUMNS } from '../../../../src/outbox/outboxColumns.js';

const COLUMNS = [
  'id',
  'aggregate_type',
  'aggregate_id',
  'event_type',
  'payload',
  'headers',
  'created_at',
  'seq',
];

const ROW: readonly TestValue[] = [
  '5f0c1c3e-0000-4000-8000-000000000001',
  'order',
  'o-1',
  'created',
  '{}',
  null,
  '2026-12-03 10:00:00.123456+00',
  '7',
];

function relationAndTuple(values: readonly TestValue[]): {
  relation: OutboxRelation;
  insert: ReturnType<typeof decodePgoutput>;
} {
  const relation = decodePgoutput(
    buildRelation(
      1,
      'public',
      'outbox_events',
      COLUMNS.map((name) => ({ name, typeOid: 25 })),
    ),
  );
  if (relation.tag !== 'relation') throw new Error('not a relation');
  return {
    relation: new OutboxRelation(relation, DEFAULT_COLUMNS),
    insert: decodePgoutput(buildInsert(1, values)),
  };
}

describe('OutboxRelation.toRecord', () => {
  it('turns a NULL where a value is needed into a record with a problem (dead-lettered, not a crash)', () => {
    const { relation, insert } = relationAndTuple(
      ROW.map((v, i) => (COLUMNS[i] === 'aggregate_id' ? null : v)),
    );
    if (insert.tag !== 'insert') throw new Error('not an insert');
    const record = relation.toRecord(insert.tuple, 1);
    assert.equal(record.problem, 'column aggregate_id is NULL');
    assert.equal(record.id, '5f0c1c3e-0000-4000-8000-000000000001');
  });

  it('has no problem for a complete row', () => {
    const { relation, insert } = relationAndTuple(ROW);
    if (insert.tag !== 'insert') throw new Error('not an insert');
    const record = relation.toRecord(insert.tuple, 1);
    assert.equal(record.problem, undefined);
    assert.equal(record.createdAt, '2026-12-03T10:00:00.123456Z');
  });
});
