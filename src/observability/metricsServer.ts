import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

import { PreconditionError } from '../errors.js';
import type { Readiness } from './readiness.js';
import type { RelayMetrics } from './relayMetrics.js';

export interface MetricsServer {
  /** The bound port. */
  readonly port: number;
  close(): Promise<void>;
}

/**
 * Serves /metrics (Prometheus text), /healthz (the process answers) and /readyz (the pipeline delivers: 503 with
 * the failing steps otherwise). Plain node:http: three read-only routes need no framework.
 */
export async function startMetricsServer(options: {
  readonly host: string;
  readonly port: number;
  readonly metrics: RelayMetrics;
  readonly readiness: Readiness;
}): Promise<MetricsServer> {
  const server: Server = createServer((request, response) => {
    const path = (request.url ?? '/').split('?')[0];
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      response.writeHead(405, { allow: 'GET, HEAD' }).end();
      return;
    }
    if (path === '/metrics') {
      options.metrics.registry.metrics().then(
        (text) => response.writeHead(200, { 'content-type': options.metrics.registry.contentType }).end(text),
        (error: unknown) => response.writeHead(500).end(String(error)),
      );
    } else if (path === '/healthz') {
      response.writeHead(200, { 'content-type': 'text/plain' }).end('ok\n');
    } else if (path === '/readyz') {
      const failing = options.readiness.failingSteps();
      const ready = options.readiness.isReady();
      response
        .writeHead(ready ? 200 : 503, { 'content-type': 'application/json' })
        .end(`${JSON.stringify({ ready, failing })}\n`);
    } else {
      response
        .writeHead(404, { 'content-type': 'text/plain' })
        .end('not found: try /metrics, /healthz, /readyz\n');
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) => {
      reject(
        new PreconditionError(
          `cannot serve metrics on ${options.host}:${options.port} (${error.code ?? error.message}): ` +
            'choose another --metrics-port, or 0 to turn the server off',
          { cause: error },
        ),
      );
    });
    server.listen(options.port, options.host, resolve);
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
