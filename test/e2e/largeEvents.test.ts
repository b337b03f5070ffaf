import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';

import { countProcessed, withRelaySetup, type RelaySetup } from '../support/relaySetup.js';
import { waitFor } from '../support/waitFor.js';

/** Events of about 8 MB: batches of --batch-size (200) of them would hold over a gigabyte. */
const EVENT_CHARS = 8_000_000;
const TOPIC_MAX_MESSAGE_BYTES = String(10 * 1024 * 1024);
/**
 * A small heap, as Node gives itself in a small container: the backlog (240 MB) would not fit in it as
 * one batch, as it did before batches were bounded by bytes.
 */
const HEAP_MIB = 160;

async function insertLarge(setup: RelaySetup, count: number): Promise<void> {
  // Few rows per statement: each is built in the server's memory first.
  for (let i = 0; i < count; i += 5) {
    await setup.fixture.query(
      `INSERT INTO ${setup.table} (aggregate_type, aggregate_id, event_type, payload)
       SELECT 'order', 'big-' || (g % 3), 'large', jsonb_build_object('n', g, 'blob', repeat('x', $1::int))
         FROM generate_series($2::int, $2::int + 4) AS g`,
      [EVENT_CHARS, i],
    );
  }
}

function peakRssMiB(pid: number | undefined): number {
  const status = readFileSync(`/proc/${String(pid ?? 0)}/status`, 'utf8');
  return Math.round(Number(/VmHWM:\s+(\d+)/.exec(status)?.[1]) / 1024);
}

async function delivered(setup: RelaySetup): Promise<number> {
  const ends = await setup.fixture.topicEndOffsets(setup.fixture.topicFor('order'));
  return [...ends.values()].reduce((sum, end) => sum + Number(end), 0);
}

describe('large events: batches bounded by bytes as well as by rows (a 160 MiB heap)', () => {
  for (const mode of ['wal', 'poll'] as const) {
    it(`${mode} mode delivers a backlog of 30 events of 8 MB (catch-up or claims) and 10 more live, with bounded memory`, async (t) => {
      await withRelaySetup(
        async (setup) => {
          // Pending before the relay starts: WAL mode catches them up from the table (no slot yet).
          await insertLarge(setup, 30);
          const relay = setup.startRelay('--mode', mode, '--poll-interval', '200ms');
          await relay.waitForLine(
            mode === 'wal' ? /streaming from the replication slot/ : /polling the outbox/,
            180_000,
          );
          await insertLarge(setup, 10);
          await waitFor(async () => (await countProcessed(setup.fixture)) === 40, {
            timeoutMs: 240_000,
            what: 'all 40 large events delivered',
          });
          assert.equal(await delivered(setup), 40, 'each event once');
          const peak = peakRssMiB(relay.child.pid);
          t.diagnostic(`${mode} mode: relay peak RSS ${String(peak)} MiB for 40 events of 8 MB`);
          assert.ok(peak < 450, `peak RSS ${String(peak)} MiB stays bounded`);
        },
        {
          topic: { partitions: 1, config: { 'max.message.bytes': TOPIC_MAX_MESSAGE_BYTES } },
          relayEnv: { NODE_OPTIONS: `--max-old-space-size=${String(HEAP_MIB)}` },
        },
      );
    });
  }
});
