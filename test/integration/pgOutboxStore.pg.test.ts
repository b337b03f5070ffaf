import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import pg from 'pg';

import type { OutboxRecord } from '../../src/core/outboxRecord.js';
import { migrate } from '../../src/db/migrate.js';
import { PgOutboxStore } from '../../src/db/pgOutboxStore.js';
import { dropSchema, withClient } from '../support/testDatabase.js';
import { requireDatabaseUrl, uniqueName } from '../support/testEnv.js';
import { DEFAULT_COLUMNS } from '../../src/outbox/outboxColumns.js';

const schema = uniqueName('store');
const publication = uniqueName('pub');

function recordOf(id: string, xid: number): OutboxRecord {
  return {
    id,
    aggregateType: 'a',
    aggregateId: 'b',
    eventType: 'c',
    payload: '{}',
    headers: null,
    createdAt: '',
    seq: '0',
    xid,
  };
}

describe('PgOutboxStore', () => {
  const pool = new pg.Pool({ connectionString: requireDatabaseUrl(), max: 2 });
  const store = new PgOutboxStore(pool, { schema, table: 'outbox_events', columns: DEFAULT_COLUMNS });
  const table = `${pg.escapeIdentifier(schema)}.outbox_events`;

  before(() => withClient((client) => migrate(client, { schema, table: 'outbox_events', publication })));
  after(async () => {
    await pool.end();
    await dropSchema(schema, publication);
  });

  it('waits for a transaction that committed in the WAL but is not visible yet, then marks its row', async () => {
    await withClient(async (writer) => {
      await writer.query('BEGIN');
      const { rows } = await writer.query<{ id: string; xid: string }>(
        `INSERT INTO ${table} (aggregate_type, aggregate_id, event_type, payload) VALUES ('a', 'b', 'c', '{}')
         RETURNING id::text, (pg_current_xact_id()::text::bigint % 4294967296)::text AS xid`,
      );
      const row = rows[0];
      assert.ok(row);
      // The relay sees the commit before other sessions do: here, the row is still invisible to the store.
      let marked = false;
      const marking = store.markProcessed([recordOf(row.id, Number(row.xid))]).then(() => (marked = true));
      await new Promise((resolve) => setTimeout(resolve, 300));
      assert.equal(marked, false, 'still waiting while the transaction is in progress');
      await writer.query('COMMIT');
      await marking;
      const { rows: after } = await writer.query<{ processed: boolean }>(
        `SELECT processed_at IS NOT NULL AS processed FROM ${table} WHERE id = $1`,
        [row.id],
      );
      assert.equal(after[0]?.processed, true);
    });
  });

  it('does not wait for rows whose transaction is visible but that were deleted', async () => {
    await withClient(async (writer) => {
      await writer.query('BEGIN');
      const { rows } = await writer.query<{ id: string; xid: string }>(
        `INSERT INTO ${table} (aggregate_type, aggregate_id, event_type, payload) VALUES ('a', 'b', 'c', '{}')
         RETURNING id::text, (pg_current_xact_id()::text::bigint % 4294967296)::text AS xid`,
      );
      await writer.query(`DELETE FROM ${table} WHERE id = $1`, [rows[0]?.id]);
      await writer.query('COMMIT');
      const started = Date.now();
      await store.markProcessed([recordOf(rows[0]?.id ?? '', Number(rows[0]?.xid))]);
      assert.ok(Date.now() - started < 10_000, 'returned without waiting for the visibility timeout');
    });
  });

  it('finds rows that are processed or dead-lettered', async () => {
    const rows = (
      await pool.query<{ id: string }>(
        `INSERT INTO ${table} (aggregate_type, aggregate_id, event_type, payload, processed_at, dead_lettered_at)
         VALUES ('a', 'b', 'c', '{}', now(), NULL), ('a', 'b', 'c', '{}', NULL, now()), ('a', 'b', 'c', '{}', NULL, NULL)
         RETURNING id::text`,
      )
    ).rows.map((r) => r.id);
    const finished = await store.findFinished(rows);
    assert.deepEqual([...finished].sort(), [rows[0], rows[1]].sort());
  });
});
