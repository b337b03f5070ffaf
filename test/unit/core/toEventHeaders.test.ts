import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { OutboxRecord } from '../../../src/core/outboxRecord.js';
import { splitJsonObject } from '../../../src/core/splitJsonObject.js';
import { toEventHeaders } from '../../../src/core/toEventHeaders.js';
import { resolveTopic } from '../../../src/core/topicName.js';

const record: OutboxRecord = {
  id: '6f1c0c1e-0000-4000-8000-000000000001',
  aggregateType: 'order',
  aggregateId: 'o-1',
  eventType: 'order.created',
  payload: '{"a": 1}',
  headers:
    '{"id": "spoofed", "n": 12345678901234567890, "obj": {"k": [1, "x,}"]}, "s": "a \\"q\\"", "t": true}',
  createdAt: '2026-12-02T12:37:28.123400Z',
  seq: '1',
};

describe('toEventHeaders', () => {
  it('sets the reserved headers, which win over the row’s own', () => {
    const headers = toEventHeaders(record);
    assert.equal(headers['id'], record.id);
    assert.equal(headers['event_type'], 'order.created');
    assert.equal(headers['aggregate_type'], 'order');
    assert.equal(headers['aggregate_id'], 'o-1');
    assert.equal(headers['created_at'], '2026-12-02T12:37:28.123400Z');
  });

  it('passes string values as they are and others as their exact JSON text', () => {
    const headers = toEventHeaders(record);
    assert.equal(headers['s'], 'a "q"');
    assert.equal(headers['n'], '12345678901234567890');
    assert.equal(headers['obj'], '{"k": [1, "x,}"]}');
    assert.equal(headers['t'], 'true');
  });

  it('splits only objects', () => {
    assert.equal(splitJsonObject('[1, 2]'), undefined);
    assert.equal(splitJsonObject('not json'), undefined);
    assert.deepEqual(splitJsonObject('{}'), []);
  });
});

describe('resolveTopic', () => {
  it('fills the template and checks the result against Kafka’s rules', () => {
    assert.deepEqual(resolveTopic({ template: 'outbox.{aggregate_type}.{event_type}' }, record), {
      ok: true,
      topic: 'outbox.order.order.created',
    });
    assert.deepEqual(resolveTopic({ topic: 'fixed' }, record), { ok: true, topic: 'fixed' });
    const bad = resolveTopic(
      { template: 'outbox.{aggregate_type}' },
      { ...record, aggregateType: 'bad type' },
    );
    assert.equal(bad.ok, false);
  });
});
