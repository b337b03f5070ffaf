import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { OutboxRecord } from '../../../src/core/outboxRecord.js';
import { splitJsonObject } from '../../../src/core/splitJsonObject.js';
import { explainBadHeaders, toEventHeaders } from '../../../src/core/toEventHeaders.js';
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

describe('toEventHeaders: unusual names and values', () => {
  const withHeaders = (headers: string | null): Record<string, string> =>
    toEventHeaders({ ...record, headers });

  it('keeps __proto__, constructor and other Object.prototype names as ordinary headers', () => {
    const headers = withHeaders(
      '{"__proto__": "p", "constructor": "c", "toString": "t", "hasOwnProperty": {"x": 1}}',
    );
    assert.equal(Object.getPrototypeOf(headers), null, 'nothing inherited, nothing polluted');
    // Compared as entries (TypeScript types headers['toString'] as Object.prototype's method), after `id`.
    assert.deepEqual(Object.entries(headers).slice(1, 5), [
      ['__proto__', 'p'],
      ['constructor', 'c'],
      ['toString', 't'],
      ['hasOwnProperty', '{"x": 1}'],
    ]);
    assert.equal(({} as Record<string, unknown>)['p'], undefined, 'Object.prototype untouched');
    // What kafkajs iterates (Object.keys) and what the dead-letter copy spreads keep the header too.
    assert.equal(Object.getOwnPropertyDescriptor({ ...headers }, '__proto__')?.value, 'p');
  });

  it('has no inherited names when the row has no headers', () => {
    const headers = withHeaders(null);
    assert.equal(headers['constructor'], undefined);
    assert.deepEqual(Object.keys(headers), [
      'id',
      'event_type',
      'aggregate_type',
      'aggregate_id',
      'created_at',
    ]);
  });

  it('leaves out a header whose value is JSON null (kafkajs cannot produce a null header value)', () => {
    const headers = withHeaders('{"a": null, "b": "null", "c": [null], "d": ""}');
    assert.equal('a' in headers, false);
    assert.equal(headers['b'], 'null', 'the string "null" is a string');
    assert.equal(headers['c'], '[null]');
    assert.equal(headers['d'], '');
  });

  it('keeps the reserved headers when the row’s are null or a __proto__ named like one', () => {
    const headers = withHeaders('{"id": null, "created_at": "x", "__proto__": {"id": "y"}}');
    assert.equal(headers['id'], record.id);
    assert.equal(headers['created_at'], record.createdAt);
    assert.equal(headers['__proto__'], '{"id": "y"}');
  });

  it('adds only the reserved headers for a value that is not an object (explainBadHeaders rejects it)', () => {
    for (const text of ['[1, 2]', '"text"', '42', 'true']) {
      assert.deepEqual(Object.keys(withHeaders(text)), [...RESERVED_NAMES], text);
    }
  });
});

const RESERVED_NAMES = ['id', 'event_type', 'aggregate_type', 'aggregate_id', 'created_at'];

describe('explainBadHeaders', () => {
  it('accepts NULL, JSON null and objects', () => {
    for (const text of [null, 'null', '{}', '{"a": [1, null]}', ' {"__proto__": 1}']) {
      assert.equal(explainBadHeaders(text), undefined, String(text));
    }
  });

  it('rejects arrays, strings, numbers and booleans, saying what the value is', () => {
    assert.equal(
      explainBadHeaders('["traceparent", "00-abc-01"]'),
      'the headers column must be a JSON object of header names (or NULL), not an array: ' +
        '"[\\"traceparent\\", \\"00-abc-01\\"]"; fix the row and retry it with walbox dlq retry',
    );
    assert.match(explainBadHeaders('"a\\nb"') ?? '', /not a string: "\\"a\\\\nb\\""/);
    assert.match(explainBadHeaders('12345678901234567890') ?? '', /not a number: "12345678901234567890"/);
    assert.match(explainBadHeaders('false') ?? '', /not a boolean: "false"/);
  });

  it('quotes at most ~100 characters of a long value', () => {
    const reason = explainBadHeaders(JSON.stringify('x'.repeat(500))) ?? '';
    assert.match(reason, /not a string: "\\"x{99}"… \(502 characters\)/);
  });

  it('reports text that is not JSON at all', () => {
    assert.match(explainBadHeaders('{"a":') ?? '', /^the headers column is not JSON: "\{\\"a\\":"$/);
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
