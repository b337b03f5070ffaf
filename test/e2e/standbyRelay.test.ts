import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { assertAllDelivered } from '../support/deliveryReport.js';
import { writeOrders } from '../support/outboxWriter.js';
import type { RelayProcess } from '../support/relayProcess.js';
import { withRelaySetup, type RelaySetup } from '../support/relaySetup.js';
import { runCli } from '../support/runCli.js';
import { findFreePort } from '../support/testEnv.js';
import { waitFor } from '../support/waitFor.js';
import { buildSlotCommandArgs } from '../support/walFixture.js';

const STREAMING = /streaming from the replication slot/;
const STANDING_BY = /another relay holds the replication slot \(pid \d+\): standing by/;

interface Replica {
  readonly relay: RelayProcess;
  readonly port: number;
}

async function startReplica(setup: RelaySetup, name: string): Promise<Replica> {
  const port = await findFreePort();
  // The fixture passes --metrics-port 0; the last flag wins.
  const relay = setup.startRelay('--metrics-port', String(port), '--application-name', name);
  return { relay, port };
}

async function readyz(replica: Replica): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`http://127.0.0.1:${String(replica.port)}/readyz`);
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

async function relayActiveGauge(replica: Replica): Promise<number | undefined> {
  const text = await (await fetch(`http://127.0.0.1:${String(replica.port)}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith('outbox_relay_active '));
  return line === undefined ? undefined : Number(line.split(' ')[1]);
}

async function activeReaderName(setup: RelaySetup): Promise<unknown> {
  const { fixture } = setup;
  const result = await runCli(['status', '--json', ...buildSlotCommandArgs(fixture)]);
  const report = JSON.parse(result.stdout) as { slot: { activeReader: { applicationName: string } | null } };
  return report.slot.activeReader?.applicationName;
}

describe('standby relays', () => {
  it('a second relay on the slot stands by (ready, live, outbox_relay_active 0) and takes over from a killed active one', async (t) => {
    await withRelaySetup(async (setup) => {
      const first = await startReplica(setup, 'walbox_a');
      await first.relay.waitForLine(STREAMING);
      const second = await startReplica(setup, 'walbox_b');
      await second.relay.waitForLine(STANDING_BY);

      // Both are ready (a Deployment's rollout and PodDisruptionBudget count them), each says its role.
      await waitFor(async () => (await readyz(second)).status === 200, { what: 'the standby ready' });
      assert.deepEqual((await readyz(second)).body, {
        ready: true,
        status: 'ready',
        role: 'standby',
        failing: {},
      });
      await waitFor(async () => (await readyz(first)).status === 200, { what: 'the active relay ready' });
      assert.equal((await readyz(first)).body['role'], 'active');
      assert.equal((await fetch(`http://127.0.0.1:${String(second.port)}/healthz`)).status, 200);
      assert.equal(await relayActiveGauge(first), 1);
      assert.equal(await relayActiveGauge(second), 0);
      assert.equal(await activeReaderName(setup), 'walbox_a');

      const before = await writeOrders(setup.fixture.schema, 100, 10);
      await assertAllDelivered(setup, before.committed, 0);
      assert.ok(!second.relay.lines.some((l) => STREAMING.test(l)), 'the standby never streamed alongside');

      const killedAt = Date.now();
      first.relay.child.kill('SIGKILL');
      await second.relay.waitForLine(/took over the replication slot/, 30_000);
      t.diagnostic(`takeover: ${String(Date.now() - killedAt)} ms from kill -9 to streaming`);
      const after = await writeOrders(setup.fixture.schema, 100, 10);
      await assertAllDelivered(setup, [...before.committed, ...after.committed], 0);
      assert.equal((await readyz(second)).body['role'], 'active');
      assert.equal(await relayActiveGauge(second), 1);
      assert.equal(await activeReaderName(setup), 'walbox_b');
      assert.equal(second.relay.lines.filter((l) => STANDING_BY.test(l)).length, 1);
    });
  });
});
