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

function relationAndTuple(
  values: readonly TestValue[],
  columns = DEFAULT_COLUMNS,
  names: readonly string[] = COLUMNS,
): {
  relation: OutboxRelation;
  insert: ReturnType<typeof decodePgoutput>;
} {
  const relation = decodePgoutput(
    buildRelation(
      1,
      'public',
      'outbox_events',
      names.map((name) => ({ name, typeOid: 25 })),
    ),
  );
  if (relation.tag !== 'relation') throw new Error('not a relation');
  return {
    relation: new OutboxRelation(relation, columns),
    insert: decodePgoutput(buildInsert(1, values)),
  };
}

function recordOf(
  values: readonly TestValue[],
  columns = DEFAULT_COLUMNS,
  names: readonly string[] = COLUMNS,
) {
  const { relation, insert } = relationAndTuple(values, columns, names);
  if (insert.tag !== 'insert') throw new Error('not an insert');
  return relation.toRecord(insert.tuple, 1);
}

function withCreatedAt(createdAt: TestValue): TestValue[] {
  return ROW.map((v, i) => (COLUMNS[i] === 'created_at' ? createdAt : v));
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

  it('lists every NULL column in column order, and keeps created_at as it came', () => {
    const record = recordOf(
      ROW.map((v, i) => (COLUMNS[i] === 'aggregate_id' || COLUMNS[i] === 'created_at' ? null : v)),
    );
    assert.equal(record.problem, 'column aggregate_id, created_at is NULL');
    assert.equal(record.createdAt, '');
    assert.equal(record.eventTimeMs, undefined);
  });

  it('takes the event time from created_at by default, to the millisecond', () => {
    const record = recordOf(withCreatedAt('2026-12-03 11:00:00.123456+01'));
    assert.equal(record.createdAt, '2026-12-03T10:00:00.123456Z');
    assert.equal(record.eventTimeMs, Date.UTC(2026, 11, 3, 10, 0, 0, 123));
  });

  it('reads a created_at without time zone as UTC for the event time, and sends its text as it is', () => {
    const record = recordOf(withCreatedAt('2026-12-03 10:00:00.5'));
    assert.equal(record.createdAt, '2026-12-03 10:00:00.5');
    assert.equal(record.eventTimeMs, Date.UTC(2026, 11, 3, 10, 0, 0, 500));
  });

  it('has no event time for a created_at with no instant', () => {
    const record = recordOf(withCreatedAt('infinity'));
    assert.equal(record.createdAt, 'infinity');
    assert.equal(record.eventTimeMs, undefined);
  });

  it('takes the event time from the configured column when it is not created_at', () => {
    const columns = { ...DEFAULT_COLUMNS, timestamp: 'occurred_at' };
    const record = recordOf([...ROW, '1764679048123'], columns, [...COLUMNS, 'occurred_at']);
    assert.equal(record.eventTimeMs, 1_764_679_048_123);
    assert.equal(record.createdAt, '2026-12-03T10:00:00.123456Z');
  });

  it('has no problem for a complete row', () => {
    const { relation, insert } = relationAndTuple(ROW);
    if (insert.tag !== 'insert') throw new Error('not an insert');
    const record = relation.toRecord(insert.tuple, 1);
    assert.equal(record.problem, undefined);
    assert.equal(record.createdAt, '2026-12-03T10:00:00.123456Z');
  });
});
