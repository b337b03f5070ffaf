import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import pg from 'pg';

import { reportDelivery } from '../support/deliveryReport.js';
import { javaPartition } from '../support/javaPartition.js';
import { writeLoad, writeOrders } from '../support/outboxWriter.js';
import type { RelayProcess } from '../support/relayProcess.js';
import { countProcessed, withRelaySetup, type RelaySetup } from '../support/relaySetup.js';
import { requireDatabaseUrl } from '../support/testEnv.js';
import { waitFor } from '../support/waitFor.js';

const STREAMING = /streaming from the replication slot/;
const BATCH_SIZE = 100;
/** Events published but not yet marked: at most two batches (core/streamRelay.ts). */
const IN_FLIGHT_WINDOW = 2 * BATCH_SIZE;

/** Writes 6000 events while a relay runs; once 1500 are delivered, `interrupt`s it and starts another. */
async function restartUnderLoad(
  { fixture, reader, startRelay }: RelaySetup,
  interrupt: (relay: RelayProcess) => Promise<void>,
): Promise<ReturnType<typeof reportDelivery>> {
  const first = startRelay();
  await first.waitForLine(STREAMING);
  const loading = writeLoad({
    schema: fixture.schema,
    aggregateType: 'order',
    writers: 4,
    events: 6_000,
    aggregates: 300,
  });
  await waitFor(async () => (await countProcessed(fixture)) >= 1_500, {
    what: '1500 events delivered before the interruption',
  });
  await interrupt(first);
  const second = startRelay();
  await second.waitForLine(STREAMING);
  const load = await loading;
  const topic = await reader();
  await topic.waitForIds(load.committed.map((e) => e.id));
  return reportDelivery(load.committed, topic.messages);
}

describe('WAL mode', () => {
  it('delivers 10k events of 4 concurrent writers: all committed, none rolled back, per-aggregate order, the documented message format, JSON log lines only', async () => {
    await withRelaySetup(async ({ fixture, reader, startRelay }) => {
      const relay = startRelay();
      await relay.waitForLine(STREAMING);
      const load = await writeLoad({
        schema: fixture.schema,
        aggregateType: 'order',
        writers: 4,
        events: 10_000,
        aggregates: 500,
        rollbackRatio: 0.1,
      });
      assert.ok(load.rolledBack.length > 0, 'some transactions rolled back');
      const topic = await reader();
      await topic.waitForIds(load.committed.map((e) => e.id));
      const report = reportDelivery(load.committed, topic.messages);
      assert.deepEqual(
        { lost: report.lost.length, phantom: report.phantom.length, reordered: report.reordered.length },
        { lost: 0, phantom: 0, reordered: 0 },
      );
      const rolledBack = new Set(load.rolledBack);
      assert.equal(topic.ids().filter((id) => rolledBack.has(id)).length, 0, 'no rolled-back event arrives');

      // Key, value, headers and partition, for every message, against the rows as PostgreSQL shows them.
      const rows = await fixture.query<{
        id: string;
        aggregate_id: string;
        payload: string;
        created_at: string;
        event_type: string;
      }>(
        `SELECT id::text, aggregate_id, payload::text, event_type,
                to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS created_at
           FROM ${pg.escapeIdentifier(fixture.schema)}.outbox_events`,
      );
      const byId = new Map(rows.map((r) => [r.id, r]));
      for (const message of topic.messages) {
        const row = byId.get(message.headers['id'] ?? '');
        assert.ok(row, 'message for a known row');
        assert.equal(message.key, row.aggregate_id);
        assert.equal(message.value, row.payload);
        assert.deepEqual(message.headers, {
          id: row.id,
          event_type: row.event_type,
          aggregate_type: 'order',
          aggregate_id: row.aggregate_id,
          created_at: row.created_at,
        });
        assert.equal(
          message.partition,
          javaPartition(row.aggregate_id, 3),
          'Java-compatible murmur2 partition',
        );
      }
      await waitFor(async () => (await countProcessed(fixture)) === load.committed.length, {
        what: 'all rows marked processed',
      }).catch(() => undefined);
      const marks = await fixture.query<{ id: string; processed: boolean }>(
        `SELECT id::text, processed_at IS NOT NULL AS processed FROM ${pg.escapeIdentifier(fixture.schema)}.outbox_events`,
      );
      assert.deepEqual(
        { rows: marks.length, unprocessed: marks.filter((r) => !r.processed).map((r) => r.id) },
        { rows: load.committed.length, unprocessed: [] },
      );
      // stderr included: on Node 24, kafkajs's negative timer delay used to add a plain-text warning.
      assert.deepEqual(
        relay.lines.filter((line) => !line.startsWith('{')),
        [],
        'the relay writes JSON log lines only',
      );
      // Process warnings become log lines with a `warning` field; kafkajs's (Node 24) must be gone with its timer.
      assert.deepEqual(
        relay.lines.filter((line) => 'warning' in (JSON.parse(line) as object)),
        [],
        'no process warnings',
      );
    });
  });

  it('loses nothing when the relay is killed with SIGKILL under load; duplicates stay within the in-flight batch', async () => {
    await withRelaySetup(async (setup) => {
      const report = await restartUnderLoad(setup, async (relay) => {
        relay.child.kill('SIGKILL');
        assert.equal((await relay.exited).signal, 'SIGKILL');
      });
      assert.deepEqual(
        { lost: report.lost.length, phantom: report.phantom.length, reordered: report.reordered },
        { lost: 0, phantom: 0, reordered: [] },
      );
      assert.ok(
        report.duplicates <= IN_FLIGHT_WINDOW,
        `${report.duplicates} duplicates; the in-flight window is two batches (${IN_FLIGHT_WINDOW})`,
      );
    });
  });

  it('SIGTERM drains and confirms: after a restart under load there are no duplicates', async () => {
    await withRelaySetup(async (setup) => {
      const report = await restartUnderLoad(setup, async (relay) => {
        const exit = await relay.stop('SIGTERM');
        assert.equal(exit.code, 0, relay.lines.slice(-5).join('\n'));
      });
      assert.deepEqual(
        {
          lost: report.lost.length,
          phantom: report.phantom.length,
          reordered: report.reordered.length,
          duplicates: report.duplicates,
        },
        { lost: 0, phantom: 0, reordered: 0, duplicates: 0 },
      );
    });
  });

  it('delivers a long transaction that was open across a relay crash, and back-to-back commits after it', async () => {
    await withRelaySetup(async ({ fixture, reader, startRelay }) => {
      const first = startRelay();
      await first.waitForLine(STREAMING);
      const long = new pg.Client({ connectionString: requireDatabaseUrl() });
      await long.connect();
      try {
        await long.query('BEGIN');
        const { rows } = await long.query<{ id: string }>(
          `INSERT INTO ${pg.escapeIdentifier(fixture.schema)}.outbox_events (aggregate_type, aggregate_id, event_type, payload)
           VALUES ('order', 'long-1', 'test.event', '{"long": true}') RETURNING id::text`,
        );
        const longId = rows[0]?.id ?? '';
        const before = await writeOrders(fixture.schema, 300, 50);
        const topic = await reader();
        await topic.waitForIds(before.committed.map((e) => e.id));
        // The slot moved past the long transaction's insert: only its commit record keeps it deliverable.
        await waitFor(async () => (await fixture.slotLagBytes()) < 64 * 1024, {
          what: 'slot confirmed past the short transactions',
        });
        first.child.kill('SIGKILL');
        await first.exited;
        await long.query('COMMIT');
        const after = await writeLoad({
          schema: fixture.schema,
          aggregateType: 'order',
          writers: 4,
          events: 400,
          aggregates: 50,
          rollbackRatio: 0,
        });
        const second = startRelay();
        await second.waitForLine(STREAMING);
        await topic.waitForIds([longId, ...after.committed.map((e) => e.id)]);
        const report = reportDelivery(
          [...before.committed, ...after.committed],
          topic.messages.filter((m) => m.headers['id'] !== longId),
        );
        assert.equal(report.lost.length, 0);
        assert.deepEqual(report.reordered, []);
      } finally {
        await long.end();
      }
    });
  });

  it('delivers rows that were pending before the slot existed first, in order', async () => {
    await withRelaySetup(
      async ({ fixture, reader, startRelay }) => {
        const before = await writeOrders(fixture.schema, 300, 20);
        const relay = startRelay();
        await relay.waitForLine(STREAMING);
        const after = await writeOrders(fixture.schema, 300, 20);
        const topic = await reader();
        await topic.waitForIds([before, after].flatMap((load) => load.committed.map((e) => e.id)));
        const report = reportDelivery([...before.committed, ...after.committed], topic.messages);
        assert.deepEqual(
          { lost: report.lost.length, reordered: report.reordered, duplicates: report.duplicates },
          { lost: 0, reordered: [], duplicates: 0 },
        );
        // One partition: the topic's order is the delivery order. Every pre-slot row comes before any streamed row.
        const preSlot = new Set(before.committed.map((e) => e.id));
        const positions = topic.ids().map((id) => preSlot.has(id));
        assert.equal(positions.lastIndexOf(true), preSlot.size - 1);
      },
      { topic: { partitions: 1 } },
    );
  });

  it('keeps the slot advancing while the outbox is idle and other tables take writes (G5)', async () => {
    await withRelaySetup(async ({ fixture, startRelay }) => {
      const relay = startRelay();
      await relay.waitForLine(STREAMING);
      const noise = `${pg.escapeIdentifier(fixture.schema)}.noise`;
      const [start] = await fixture.query<{ lsn: string }>('SELECT pg_current_wal_lsn()::text AS lsn');
      await fixture.query(`CREATE TABLE ${noise} (id bigserial PRIMARY KEY, filler text)`);
      for (let i = 0; i < 10; i++) {
        await fixture.query(
          `INSERT INTO ${noise} (filler) SELECT repeat('x', 200) FROM generate_series(1, 10000)`,
        );
      }
      const [written] = await fixture.query<{ bytes: string }>(
        'SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), $1::pg_lsn)::text AS bytes',
        [start?.lsn],
      );
      assert.ok(Number(written?.bytes) > 10 * 1024 * 1024, 'the noise wrote more than 10 MB of WAL');
      await waitFor(async () => (await fixture.slotLagBytes()) < 256 * 1024, {
        timeoutMs: 60_000,
        what: 'the idle slot to confirm past the unrelated WAL',
      });
    });
  });

  it('publishes the payload exactly as payload::text shows it (big integers, unicode, escaped quotes)', async () => {
    await withRelaySetup(async ({ fixture, reader, startRelay }) => {
      const relay = startRelay();
      await relay.waitForLine(STREAMING);
      const rows = await fixture.query<{ id: string; payload: string }>(
        `INSERT INTO ${pg.escapeIdentifier(fixture.schema)}.outbox_events (aggregate_type, aggregate_id, event_type, payload, headers)
         VALUES ('order', 'exact-1', 'test.event', $1::jsonb, $2::jsonb) RETURNING id::text, payload::text`,
        [
          '{"big": 12345678901234567890, "text": "zażółć gęślą jaźń 😀", "quote": "say \\"hi\\" \\\\ done", "n": 1.50}',
          '{"traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "attempt": 12345678901234567890, "id": "spoofed"}',
        ],
      );
      const row = rows[0];
      assert.ok(row);
      const topic = await reader();
      await topic.waitForIds([row.id]);
      const message = topic.messages.find((m) => m.headers['id'] === row.id);
      assert.equal(message?.value, row.payload);
      assert.match(row.payload, /12345678901234567890/);
      assert.equal(message.headers['traceparent'], '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01');
      assert.equal(
        message.headers['attempt'],
        '12345678901234567890',
        'non-string header values as their JSON text',
      );
      assert.equal(message.headers['id'], row.id, 'reserved headers win');
    });
  });

  it('dead-letters an event larger than the topic accepts, with last_error, and the others flow', async () => {
    await withRelaySetup(
      async ({ fixture, reader, startRelay }) => {
        const relay = startRelay();
        await relay.waitForLine(STREAMING);
        const table = `${pg.escapeIdentifier(fixture.schema)}.outbox_events`;
        const inserted = await fixture.query<{ id: string; event_type: string }>(
          `INSERT INTO ${table} (aggregate_type, aggregate_id, event_type, payload)
           VALUES ('order', 'big-1', 'small.before', '{"n": 1}'),
                  ('order', 'big-1', 'huge', jsonb_build_object('blob', repeat('x', 50000))),
                  ('order', 'big-1', 'small.after', '{"n": 3}')
           RETURNING id::text, event_type`,
        );
        const ids = Object.fromEntries(inserted.map((r) => [r.event_type, r.id]));
        const topic = await reader();
        await topic.waitForIds([ids['small.before'] ?? '', ids['small.after'] ?? '']);
        assert.deepEqual(
          topic.messages.map((m) => m.headers['event_type']),
          ['small.before', 'small.after'],
        );
        await waitFor(
          async () => {
            const rows = await fixture.query<{ dead: boolean }>(
              `SELECT dead_lettered_at IS NOT NULL AS dead FROM ${table} WHERE id = $1`,
              [ids['huge']],
            );
            return rows[0]?.dead === true;
          },
          { what: 'the huge row dead-lettered' },
        );
        const [dead] = await fixture.query<{ last_error: string; processed: boolean }>(
          `SELECT last_error, processed_at IS NOT NULL AS processed FROM ${table} WHERE id = $1`,
          [ids['huge']],
        );
        assert.match(dead?.last_error ?? '', /exceeds max\.message\.bytes 20000/);
        assert.equal(dead?.processed, false);
        const view = await fixture.query<{ id: string }>(
          `SELECT id::text FROM ${pg.escapeIdentifier(fixture.schema)}.outbox_dead_letters`,
        );
        assert.deepEqual(
          view.map((r) => r.id),
          [ids['huge']],
        );
      },
      { topic: { config: { 'max.message.bytes': '20000' } } },
    );
  });
});
