import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';

import { migrate } from '../../src/db/migrate.js';
import { enqueue } from '../../src/index.js';
import { dropSchema, withClient } from '../support/testDatabase.js';
import { uniqueName } from '../support/testEnv.js';

const schema = uniqueName('slot');
const publication = uniqueName('pub');
const slot = uniqueName('slot');

describe('the private cluster', () => {
  after(async () => {
    await withClient((client) =>
      client.query(
        'SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = $1',
        [slot],
      ),
    );
    await dropSchema(schema, publication);
  });

  it('runs with wal_level=logical and room for slots and senders', async () => {
    await withClient(async (client) => {
      const { rows } = await client.query<{ name: string; setting: string }>(
        `SELECT name, setting FROM pg_settings WHERE name IN ('wal_level', 'max_replication_slots', 'max_wal_senders')`,
      );
      const settings = Object.fromEntries(rows.map((r) => [r.name, r.setting]));
      assert.equal(settings['wal_level'], 'logical');
      assert.ok(Number(settings['max_replication_slots']) >= 20);
      assert.ok(Number(settings['max_wal_senders']) >= 20);
      const { rows: port } = await client.query<{ port: string }>('SHOW port');
      assert.notEqual(port[0]?.port, '5432', 'tests must never use the shared server');
    });
  });

  it('streams an outbox INSERT through a pgoutput slot', async () => {
    await withClient(async (client) => {
      await migrate(client, { schema, table: 'outbox_events', publication });
      await client.query(`SELECT pg_create_logical_replication_slot($1, 'pgoutput')`, [slot]);
      await client.query('BEGIN');
      const event = await enqueue(
        client,
        { aggregateType: 'order', aggregateId: 'o-7', eventType: 'order.created', payload: { n: 7 } },
        { schema },
      );
      await client.query('COMMIT');

      const { rows } = await client.query<{ data: Buffer }>(
        `SELECT data FROM pg_logical_slot_get_binary_changes($1, NULL, NULL, 'proto_version', '1', 'publication_names', $2)`,
        [slot, publication],
      );
      const tags = rows.map((r) => String.fromCharCode(r.data[0] ?? 0));
      assert.deepEqual(tags, ['B', 'R', 'I', 'C']);
      const relation = rows[1]?.data.toString('latin1') ?? '';
      assert.ok(
        relation.includes(`${schema}\0outbox_events\0`),
        'the Relation message names the outbox table',
      );
      const insert = rows[2]?.data.toString('utf8') ?? '';
      assert.ok(insert.includes(event.id), 'the Insert carries the event id');
      assert.ok(insert.includes('{"n": 7}'), 'the Insert carries the payload as jsonb text');
    });
  });
});
