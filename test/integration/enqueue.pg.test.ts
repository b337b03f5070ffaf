import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import pg from 'pg';

import { migrate } from '../../src/db/migrate.js';
import { ConfigError } from '../../src/errors.js';
import { enqueue } from '../../src/index.js';
import { waitFor } from '../support/waitFor.js';
import { dropSchema, withClient } from '../support/testDatabase.js';
import { requireDatabaseUrl, uniqueName } from '../support/testEnv.js';

const databaseUrl = requireDatabaseUrl();
const schema = uniqueName('enq');
const publication = uniqueName('pub');
const options = { schema, table: 'outbox_events' };

async function countEvents(client: pg.Client, aggregateId: string): Promise<number> {
  const { rows } = await client.query<{ n: string }>(
    `SELECT count(*) AS n FROM "${schema}".outbox_events WHERE aggregate_id = $1`,
    [aggregateId],
  );
  return Number(rows[0]?.n);
}

describe('enqueue', () => {
  before(async () => {
    await withClient((client) => migrate(client, { schema, table: 'outbox_events', publication }));
  });
  after(() => dropSchema(schema, publication));

  it('inserts an event that becomes visible when the transaction commits', async () => {
    await withClient(async (client) => {
      await client.query('BEGIN');
      const event = await enqueue(
        client,
        {
          aggregateType: 'order',
          aggregateId: 'o-1',
          eventType: 'order.created',
          payload: { total: 42 },
          headers: { traceparent: '00-abc-01' },
        },
        options,
      );
      await client.query('COMMIT');
      assert.match(event.id, /^[0-9a-f-]{36}$/);
      const { rows } = await client.query<{ payload: string; headers: unknown; event_type: string }>(
        `SELECT payload::text AS payload, headers, event_type FROM "${schema}".outbox_events WHERE id = $1`,
        [event.id],
      );
      assert.deepEqual(rows[0], {
        payload: '{"total": 42}',
        headers: { traceparent: '00-abc-01' },
        event_type: 'order.created',
      });
    });
  });

  it('leaves no event when the transaction rolls back', async () => {
    await withClient(async (client) => {
      await client.query('BEGIN');
      await enqueue(
        client,
        { aggregateType: 'order', aggregateId: 'o-rollback', eventType: 'order.created', payload: {} },
        options,
      );
      assert.equal(await countEvents(client, 'o-rollback'), 1, 'visible inside its own transaction');
      await client.query('ROLLBACK');
      assert.equal(await countEvents(client, 'o-rollback'), 0);
    });
  });

  it('keeps payloadJson text exact (integers beyond 2^53)', async () => {
    await withClient(async (client) => {
      const event = await enqueue(
        client,
        {
          aggregateType: 'order',
          aggregateId: 'o-big',
          eventType: 'e',
          payloadJson: '{"big": 12345678901234567890}',
        },
        options,
      );
      const { rows } = await client.query<{ payload: string }>(
        `SELECT payload::text AS payload FROM "${schema}".outbox_events WHERE id = $1`,
        [event.id],
      );
      assert.equal(rows[0]?.payload, '{"big": 12345678901234567890}');
    });
  });

  it('takes the aggregate lock when asked, blocking a second writer of the same aggregate', async () => {
    await withClient(async (first) => {
      await withClient(async (second) => {
        await first.query('BEGIN');
        await enqueue(
          first,
          { aggregateType: 'order', aggregateId: 'o-lock', eventType: 'e', payload: 1 },
          { ...options, lockAggregate: true },
        );
        await second.query('BEGIN');
        let secondDone = false;
        const pending = enqueue(
          second,
          { aggregateType: 'order', aggregateId: 'o-lock', eventType: 'e', payload: 2 },
          { ...options, lockAggregate: true },
        ).then(() => {
          secondDone = true;
        });
        // The second writer waits on the advisory lock while the first transaction is open.
        await waitFor(async () => {
          const r = await first.query<{ waiting: boolean }>(
            `SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND NOT granted) AS waiting`,
          );
          return r.rows[0]?.waiting === true;
        });
        assert.equal(secondDone, false);
        await first.query('COMMIT');
        await pending;
        await second.query('COMMIT');
        const { rows: order } = await first.query<{ payload: string }>(
          `SELECT payload::text AS payload FROM "${schema}".outbox_events WHERE aggregate_id = 'o-lock' ORDER BY seq`,
        );
        assert.deepEqual(
          order.map((r) => r.payload),
          ['1', '2'],
        );
      });
    });
  });

  it('refuses a pool, whose queries would escape the transaction', async () => {
    const pool = new pg.Pool({ connectionString: databaseUrl });
    try {
      await assert.rejects(
        enqueue(pool, { aggregateType: 'a', aggregateId: 'b', eventType: 'c', payload: {} }, options),
        (error: unknown) => error instanceof ConfigError && /got a pool/.test(error.message),
      );
    } finally {
      await pool.end();
    }
  });
});
