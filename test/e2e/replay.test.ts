import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { writeOrders } from '../support/outboxWriter.js';
import { countProcessed, withRelaySetup, type RelaySetup } from '../support/relaySetup.js';
import { runCli } from '../support/runCli.js';
import { waitFor } from '../support/waitFor.js';

const STREAMING = /streaming from the replication slot/;

function replayArgs(setup: RelaySetup, ...extra: string[]): string[] {
  const { fixture } = setup;
  return [
    'replay',
    ...extra,
    '--database-url',
    fixture.databaseUrl,
    '--kafka-brokers',
    fixture.brokers,
    '--schema',
    fixture.schema,
    '--topic-template',
    `${fixture.topicPrefix}.{aggregate_type}`,
  ];
}

describe('walbox replay', () => {
  it('publishes processed events again by seq range, ids or time, in seq order; counts them dry; leaves pending rows alone', async () => {
    await withRelaySetup(async (setup) => {
      const relay = setup.startRelay();
      await relay.waitForLine(STREAMING);
      const written = await writeOrders(setup.fixture.schema, 20, 4);
      await waitFor(async () => (await countProcessed(setup.fixture)) === 20, {
        what: '20 events delivered',
      });
      assert.equal((await relay.stop('SIGTERM')).code, 0);
      // A row written while no relay runs is pending: replay never touches it.
      const [pending] = await setup.fixture.query<{ id: string }>(
        `INSERT INTO ${setup.table} (aggregate_type, aggregate_id, event_type, payload)
         VALUES ('order', 'o-pending', 'OrderPlaced', '{}') RETURNING id::text`,
      );
      const rows = await setup.fixture.query<{ id: string; seq: string; aggregate_id: string }>(
        `SELECT id::text, seq::text, aggregate_id FROM ${setup.table} WHERE processed_at IS NOT NULL ORDER BY seq::bigint`,
      );
      assert.equal(rows.length, 20);
      const middle = rows.slice(5, 15);
      const from = middle[0]?.seq ?? '';
      const to = middle.at(-1)?.seq ?? '';

      const dry = await runCli(replayArgs(setup, '--from-seq', from, '--to-seq', to, '--dry-run'));
      assert.equal(dry.code, 0, dry.stderr);
      assert.match(
        dry.stdout,
        new RegExp(`would publish 10 processed events of \\d aggregates \\(seq ${from}–${to}\\)`),
      );

      const reader = await setup.reader();
      await reader.waitForIds(written.committed.map((e) => e.id));
      const firstRound = reader.messages.length;
      assert.equal(firstRound, 20);

      const bySeq = await runCli(replayArgs(setup, '--from-seq', from, '--to-seq', to));
      assert.equal(bySeq.code, 0, bySeq.stderr);
      assert.match(bySeq.stdout, /published 10 events/);
      await waitFor(() => reader.messages.length === 30, { what: '10 replayed events' });
      const replayed = reader.messages.slice(20).map((m) => m.headers['id']);
      // Same keys (so the same partitions), and per aggregate in seq order.
      for (const aggregate of new Set(middle.map((r) => r.aggregate_id))) {
        assert.deepEqual(
          replayed.filter((id) => middle.find((r) => r.id === id)?.aggregate_id === aggregate),
          middle.filter((r) => r.aggregate_id === aggregate).map((r) => r.id),
        );
      }
      for (const message of reader.messages.slice(20)) {
        const original = reader.messages.find((m) => m.headers['id'] === message.headers['id']);
        assert.deepEqual(
          { key: message.key, value: message.value, partition: message.partition },
          { key: original?.key, value: original?.value, partition: original?.partition },
        );
      }

      const ids = [rows[0]?.id ?? '', rows[19]?.id ?? '', pending?.id ?? ''];
      const byIds = await runCli(replayArgs(setup, ...ids));
      assert.equal(byIds.code, 0, byIds.stderr);
      assert.match(byIds.stdout, /published 2 events/, 'the pending row is not replayed');
      await waitFor(() => reader.messages.length === 32, { what: '2 replayed events' });

      const byTime = await runCli(replayArgs(setup, '--since', '2000-01-01T00:00:00Z'));
      assert.equal(byTime.code, 0, byTime.stderr);
      assert.match(byTime.stdout, /published 20 events/);
      await waitFor(() => reader.messages.length === 52, { what: '20 replayed events' });
      assert.ok(!reader.messages.some((m) => m.headers['id'] === pending?.id));
    });
  });

  it('refuses an ambiguous or malformed selection in one line (exit 2), before connecting', async () => {
    for (const [args, expected] of [
      [['replay'], /choose the events one way/],
      [['replay', '--from-seq', '5'], /give both --from-seq and --to-seq/],
      [['replay', '--from-seq', '9', '--to-seq', '5'], /--to-seq 5 is below --from-seq 9/],
      [['replay', '--since', 'yesterday'], /invalid --since "yesterday": must be an ISO 8601 time/],
      [['replay', 'not-a-uuid'], /"not-a-uuid" is not an event id/],
      [
        ['replay', '00000000-0000-0000-0000-000000000001', '--from-seq', '1', '--to-seq', '2'],
        /choose the events one way/,
      ],
    ] as const) {
      const result = await runCli([...args, '--database-url', 'postgres://u@127.0.0.1:1/db']);
      assert.equal(result.code, 2, `${args.join(' ')}: ${result.stderr}`);
      assert.equal(result.stderr.trim().split('\n').length, 1, result.stderr);
      assert.match(result.stderr, expected);
    }
  });
});
