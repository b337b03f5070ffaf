import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { loadConfig } from '../../../src/config/loadConfig.js';
import { toOutboxTable } from '../../../src/config/toOutboxTable.js';
import type { OutboxRecord } from '../../../src/core/outboxRecord.js';
import { parseEventTime } from '../../../src/core/parseEventTime.js';
import { resolveTopic } from '../../../src/core/topicName.js';
import { toKafkaMessage, toMessageLayout } from '../../../src/sink/kafka/toKafkaMessage.js';
import { SHAPE_COLUMNS } from '../../../src/outbox/outboxColumns.js';

const record: OutboxRecord = {
  id: '6f1c0c1e-0000-4000-8000-000000000001',
  aggregateType: 'order',
  aggregateId: 'o-1',
  eventType: 'order.created',
  payload: '{"a": 1}',
  headers: '{"trace": "t-1", "tenant": "from-row"}',
  createdAt: '2026-12-02T12:37:28.123400Z',
  eventTimeMs: 1_764_679_048_123,
  headerValues: ['acme', null],
  seq: '1',
  committedAtMs: 1_764_679_049_000,
};

function messageFor(flags: Parameters<typeof loadConfig>[0], event: OutboxRecord = record) {
  return toKafkaMessage(event, toMessageLayout(loadConfig(flags)));
}

describe('--outbox-shape', () => {
  it("walbox's shape keeps walbox's column names, topic and headers", () => {
    const config = loadConfig();
    assert.deepEqual(toOutboxTable(config).columns, SHAPE_COLUMNS.walbox);
    assert.equal(config.topicTemplate, 'outbox.{aggregate_type}');
    assert.deepEqual(
      config.metadataHeaders.map((h) => h.header),
      ['event_type', 'aggregate_type', 'aggregate_id', 'created_at'],
    );
    assert.equal(config.kafkaTimestamp, 'event');
  });

  it("debezium names Debezium's columns, its default topic and only the id header", () => {
    const config = loadConfig({ flags: { outboxShape: 'debezium' } });
    assert.deepEqual(toOutboxTable(config).columns, {
      id: 'id',
      aggregateType: 'aggregatetype',
      aggregateId: 'aggregateid',
      eventType: 'type',
      payload: 'payload',
      timestamp: 'created_at',
      headerColumns: [],
    });
    assert.equal(config.topicTemplate, 'outbox.event.${routedByValue}');
    assert.deepEqual(config.metadataHeaders, []);
    const topic = resolveTopic({ template: config.topicTemplate }, record);
    assert.deepEqual(topic, { ok: true, topic: 'outbox.event.order' });
  });

  it('lets single columns, the template and the headers override the preset (env and flags)', () => {
    const config = loadConfig({
      env: { WALBOX_OUTBOX_SHAPE: 'debezium', WALBOX_KEY_COLUMN: 'tenant_key' },
      flags: {
        topicTemplate: 'events.{event_type}',
        metadataHeaders: 'event_type:eventType',
        headerColumns: 'tenant, region:x-region',
      },
    });
    const { columns } = toOutboxTable(config);
    assert.equal(columns.aggregateId, 'tenant_key');
    assert.equal(columns.aggregateType, 'aggregatetype');
    assert.deepEqual(columns.headerColumns, [
      { column: 'tenant', header: 'tenant' },
      { column: 'region', header: 'x-region' },
    ]);
    assert.equal(config.topicTemplate, 'events.{event_type}');
    assert.deepEqual(config.metadataHeaders, [{ field: 'event_type', header: 'eventType' }]);
  });

  it('refuses bad column names and header lists in one line each', () => {
    assert.throws(() => loadConfig({ flags: { keyColumn: 'a"; drop table x' } }), /invalid --key-column/);
    assert.throws(
      () => loadConfig({ flags: { outboxShape: 'kafka-connect' } }),
      /must be one of walbox, debezium/,
    );
    assert.throws(() => loadConfig({ flags: { headerColumns: 'a:b:c' } }), /not name or name:header-name/);
    assert.throws(
      () => loadConfig({ flags: { headerColumns: 'a:id' } }),
      /"id", which is always the event id/,
    );
    assert.throws(() => loadConfig({ flags: { headerColumns: 'a:x,b:x' } }), /names the header "x" twice/);
    assert.throws(() => loadConfig({ flags: { metadataHeaders: 'seq' } }), /unknown field "seq"/);
    assert.deepEqual(loadConfig({ flags: { metadataHeaders: 'none' } }).metadataHeaders, []);
  });

  it("accepts Debezium's ${routedByValue} in any template", () => {
    const config = loadConfig({ flags: { topicTemplate: 'walbox.${routedByValue}.{event_type}' } });
    assert.deepEqual(resolveTopic({ template: config.topicTemplate }, record), {
      ok: true,
      topic: 'walbox.order.order.created',
    });
    assert.throws(() => loadConfig({ flags: { topicTemplate: 'x.${other}' } }), /unknown placeholder/);
  });
});

describe('the Kafka message of a record', () => {
  it('sends header columns (NULL: none), then metadata headers, then id, later ones winning', () => {
    const message = messageFor({
      flags: { headerColumns: 'tenant,region', metadataHeaders: 'aggregate_id:key' },
    });
    assert.deepEqual({ ...message.headers }, { trace: 't-1', tenant: 'acme', key: 'o-1', id: record.id });
    assert.equal(message.key, 'o-1');
    assert.equal(message.value, '{"a": 1}');
  });

  it('stamps the event time by default, the commit time or nothing (kafkajs: the send time) on request', () => {
    assert.equal(messageFor({}).timestamp, '1764679048123');
    assert.equal(messageFor({ flags: { kafkaTimestamp: 'commit' } }).timestamp, '1764679049000');
    assert.equal(messageFor({ flags: { kafkaTimestamp: 'send' } }).timestamp, undefined);
    // a row read from the table has no commit time: its event time stands in
    const fromTable: OutboxRecord = { ...record, committedAtMs: undefined };
    assert.equal(messageFor({ flags: { kafkaTimestamp: 'commit' } }, fromTable).timestamp, '1764679048123');
    const noInstant: OutboxRecord = { ...record, eventTimeMs: undefined };
    assert.equal(messageFor({}, noInstant).timestamp, undefined);
  });
});

describe('parseEventTime', () => {
  it('reads timestamptz in any offset, timestamp as UTC and epoch milliseconds', () => {
    assert.equal(parseEventTime('2026-12-02 14:37:28.1234+02'), Date.UTC(2026, 11, 2, 12, 37, 28, 123));
    assert.equal(parseEventTime('2026-12-02 12:37:28.123456'), Date.UTC(2026, 11, 2, 12, 37, 28, 123));
    assert.equal(parseEventTime('2026-12-02 12:37:28'), Date.UTC(2026, 11, 2, 12, 37, 28));
    assert.equal(parseEventTime('1764679048123'), 1_764_679_048_123);
  });

  it('gives no instant for infinity, BC, before 1970 or text', () => {
    for (const text of [
      'infinity',
      '-infinity',
      '0044-03-15 12:00:00+00 BC',
      '1969-12-31 23:59:59+00',
      '-5',
      'soon',
    ]) {
      assert.equal(parseEventTime(text), undefined, text);
    }
  });
});
