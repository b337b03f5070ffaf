import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { withRelaySetup } from '../support/relaySetup.js';
import { runCli } from '../support/runCli.js';
import { serviceLinks } from '../support/serviceLinks.js';
import { findFreePort } from '../support/testEnv.js';
import { waitFor } from '../support/waitFor.js';

const STREAMING = /streaming from the replication slot/;

/** What a pod gets from the kubelet next to a Service named walbox and another named walbox-admin. */
const KUBELET_ENV = {
  ...serviceLinks('walbox', [{ name: 'metrics', port: 9464, protocol: 'TCP' }]),
  ...serviceLinks('walbox-admin', [{ port: 8080, protocol: 'TCP' }]),
};

async function readyStatus(port: number): Promise<number> {
  try {
    return (await fetch(`http://127.0.0.1:${String(port)}/readyz`)).status;
  } catch {
    return 0;
  }
}

describe('Kubernetes service-link variables', () => {
  it('walbox run starts, streams and is ready with them in its environment, and stops cleanly', async () => {
    const port = await findFreePort();
    await withRelaySetup(
      async ({ startRelay }) => {
        // The fixture passes --metrics-port 0; the last flag wins.
        const relay = startRelay('--metrics-port', String(port));
        await relay.waitForLine(STREAMING);
        await waitFor(async () => (await readyStatus(port)) === 200, { what: '/readyz 200' });
        const stopped = await relay.stop();
        assert.equal(stopped.code, 0);
        assert.ok(!relay.lines.some((l) => /unknown environment variable/.test(l)));
      },
      { relayEnv: KUBELET_ENV },
    );
  });

  it('walbox run exits 2 in one line when a Service walbox-metrics sets WALBOX_METRICS_PORT', async () => {
    const result = await runCli(['run', '--database-url', 'postgres://walbox@127.0.0.1:1/app'], {
      env: serviceLinks('walbox-metrics', [{ name: 'metrics', port: 9464, protocol: 'TCP' }], '10.0.0.5'),
    });
    assert.equal(result.code, 2);
    assert.equal(result.stderr.trim().split('\n').length, 1, result.stderr);
    assert.match(
      result.stderr,
      /WALBOX_METRICS_PORT=tcp:\/\/10\.0\.0\.5:9464 looks like a Kubernetes service-link variable of a Service named walbox-metrics.*enableServiceLinks: false/,
    );
  });
});
