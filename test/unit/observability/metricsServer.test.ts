import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, describe, it } from 'node:test';

import pino from 'pino';

import { startMetricsServer, type MetricsServer } from '../../../src/observability/metricsServer.js';
import { Readiness } from '../../../src/observability/readiness.js';
import { RelayMetrics } from '../../../src/observability/relayMetrics.js';

/** Generous: the server's own bounds are a few seconds; Node's defaults held such clients for 60–95 s. */
const DISCONNECT_WITHIN_MS = 15_000;
const MARKER = 'SECRET-MARKER-7f3a';

/** Opens a raw TCP connection, sends `data` (if any), then waits without ending it until the server closes it. */
function sendAndWaitForClose(
  port: number,
  data: string,
): Promise<{ closedAfterMs: number; received: string }> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    let received = '';
    const socket = connect(port, '127.0.0.1', () => {
      if (data !== '') socket.write(data);
    });
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`the server kept a stalled client for more than ${String(DISCONNECT_WITHIN_MS)} ms`));
    }, DISCONNECT_WITHIN_MS);
    socket.setEncoding('utf8').on('data', (chunk: string) => (received += chunk));
    socket.on('error', () => undefined); // a reset also counts as a disconnect
    socket.on('close', () => {
      clearTimeout(timer);
      resolve({ closedAfterMs: Date.now() - started, received });
    });
  });
}

describe('startMetricsServer', () => {
  let server: MetricsServer;
  let readiness: Readiness;
  let url: string;

  before(async () => {
    readiness = new Readiness(pino({ level: 'silent' }));
    server = await startMetricsServer({
      host: '127.0.0.1',
      port: 0,
      metrics: new RelayMetrics('poll'),
      readiness,
    });
    url = `http://127.0.0.1:${String(server.port)}`;
  });
  after(() => server.close());

  it('disconnects clients that stall: half a request line, unfinished headers, nothing at all', async () => {
    // In parallel: each takes the header timeout (a few seconds).
    const stalls = {
      'half a request line': 'GET /metr',
      'unfinished headers': 'GET /metrics HTTP/1.1\r\nHost: x\r\n',
      'nothing sent': '',
    };
    const results = await Promise.all(
      Object.entries(stalls).map(async ([what, data]) => {
        const { closedAfterMs, received } = await sendAndWaitForClose(server.port, data);
        return `${what}: disconnected after ${String(closedAfterMs)} ms ${JSON.stringify(received.split('\r\n')[0])}`;
      }),
    );
    console.log(results.join('\n'));
  });

  it('refuses connections beyond its bound, and serves again once they are gone', async () => {
    const sockets = Array.from({ length: 80 }, () => connect(server.port, '127.0.0.1'));
    const closedEarly = await Promise.all(
      sockets.map(
        (socket) =>
          new Promise<boolean>((resolve) => {
            const timer = setTimeout(() => resolve(false), 2_000); // well before the 5 s header timeout
            socket.on('error', () => undefined);
            socket.on('close', () => {
              clearTimeout(timer);
              resolve(true);
            });
          }),
      ),
    );
    const refused = closedEarly.filter(Boolean).length;
    for (const socket of sockets) socket.destroy();
    assert.ok(refused >= 80 - 64, `only ${String(refused)} of 80 idle connections were refused`);
    assert.ok(refused < 80, 'every connection was refused');
    // The server frees the slots as it notices the closes. (Raw requests: fetch may hang on a dropped connection.)
    let answer = '';
    for (let i = 0; i < 50 && !answer.startsWith('HTTP/1.1 200'); i++) {
      answer = (
        await sendAndWaitForClose(
          server.port,
          'GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n',
        )
      ).received;
      if (!answer.startsWith('HTTP/1.1 200')) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    assert.match(answer, /^HTTP\/1\.1 200/);
  });

  it('still answers /healthz and /metrics', async () => {
    const health = await fetch(`${url}/healthz`);
    assert.equal(health.status, 200);
    assert.equal(await health.text(), 'ok\n');
    const metrics = await fetch(`${url}/metrics`);
    assert.equal(metrics.status, 200);
    assert.match(await metrics.text(), /outbox_events_published_total/);
  });

  it('/readyz names what is not ready in fixed words, never an error text', async () => {
    const starting = await fetch(`${url}/readyz`);
    assert.equal(starting.status, 503);
    assert.deepEqual(await starting.json(), {
      ready: false,
      status: 'not ready: starting',
      role: 'starting',
      failing: {},
    });

    // A relay standing by for the replication slot is ready: it takes over by itself (docs/operations.md).
    readiness.setRole('standby');
    const standby = await fetch(`${url}/readyz`);
    assert.equal(standby.status, 200);
    assert.deepEqual(await standby.json(), { ready: true, status: 'ready', role: 'standby', failing: {} });

    readiness.setRole('active');
    const ready = await fetch(`${url}/readyz`);
    assert.equal(ready.status, 200);
    assert.deepEqual(await ready.json(), { ready: true, status: 'ready', role: 'active', failing: {} });

    readiness.setFailing('kafka', `connect ECONNREFUSED kafka-internal.${MARKER}:9092`);
    readiness.setFailing('database', `password authentication failed for user "${MARKER}"`);
    readiness.observer().retrying?.({
      step: 'publish to Kafka',
      attempt: 2,
      delayMs: 100,
      error: new Error(`broker said ${MARKER}`),
    });
    const failing = await fetch(`${url}/readyz`);
    const body = await failing.text();
    assert.equal(failing.status, 503);
    assert.ok(!body.includes(MARKER), body);
    assert.deepEqual(JSON.parse(body), {
      ready: false,
      status:
        'not ready: kafka unreachable, database cannot read the outbox status, publish to Kafka failing, being retried',
      role: 'active',
      failing: {
        kafka: 'unreachable',
        database: 'cannot read the outbox status',
        'publish to Kafka': 'failing, being retried',
      },
    });
    // The reasons are kept for the logs.
    assert.match(readiness.failingSteps()['kafka'] ?? '', new RegExp(MARKER));

    readiness.setFailing('kafka', undefined);
    readiness.setFailing('database', undefined);
    readiness.observer().recovered?.({ step: 'publish to Kafka' });
    assert.equal((await fetch(`${url}/readyz`)).status, 200);
  });

  it('/metrics answers a collection failure without its error text', async () => {
    const metrics = new RelayMetrics('poll');
    metrics.registry.metrics = () => Promise.reject(new Error(`collector failed: ${MARKER}`));
    const logged: unknown[] = [];
    const own = await startMetricsServer({
      host: '127.0.0.1',
      port: 0,
      metrics,
      readiness,
      logger: {
        debug: () => undefined,
        info: () => undefined,
        warn: () => undefined,
        error: (f) => logged.push(f),
      },
    });
    try {
      const response = await fetch(`http://127.0.0.1:${String(own.port)}/metrics`);
      assert.equal(response.status, 500);
      const body = await response.text();
      assert.ok(!body.includes(MARKER), body);
      assert.equal(logged.length, 1);
    } finally {
      await own.close();
    }
  });
});
