import { createServer, type Server, type ServerOptions } from 'node:http';
import type { AddressInfo } from 'node:net';

import type { RelayLogger } from '../core/ports.js';
import { PreconditionError } from '../errors.js';
import type { Readiness } from './readiness.js';
import type { RelayMetrics } from './relayMetrics.js';

export interface MetricsServer {
  /** The bound port. */
  readonly port: number;
  close(): Promise<void>;
}

// Bounds for clients of this server. Scrapers and probes send one short GET and read a small answer, so seconds
// are plenty; Node's defaults (60 s for headers, 300 s for a request, checked every 30 s) let a slow or stalled
// client hold a socket for 60–95 s, and unbounded connections let a few of them pile up.

/** The request line and headers must arrive within this. */
const HEADERS_TIMEOUT_MS = 5_000;
/** The whole request (a GET has no body) must arrive within this. */
const REQUEST_TIMEOUT_MS = 10_000;
/** How often Node checks the two timeouts above: their precision. */
const TIMEOUT_CHECK_INTERVAL_MS = 1_000;
/** An idle keep-alive connection is closed after this (Prometheus scrapes every 15 s or more: it reconnects). */
const KEEP_ALIVE_TIMEOUT_MS = 5_000;
/** A socket with no traffic either way (e.g. a client that stops reading the answer) is closed after this. */
const SOCKET_IDLE_TIMEOUT_MS = 15_000;
/** Open connections at once; more are refused. Far above a few scrapers and probes. */
const MAX_CONNECTIONS = 64;

/**
 * Serves /metrics (Prometheus text), /healthz (the process answers) and /readyz (the pipeline delivers: 503 with
 * the failing steps, in fixed words, otherwise). Plain node:http: three read-only routes need no framework.
 */
export async function startMetricsServer(options: {
  readonly host: string;
  readonly port: number;
  readonly metrics: RelayMetrics;
  readonly readiness: Readiness;
  /** Where a failure to collect the metrics is reported (the HTTP answer says only that it failed). */
  readonly logger?: RelayLogger;
}): Promise<MetricsServer> {
  const limits: ServerOptions = {
    headersTimeout: HEADERS_TIMEOUT_MS,
    requestTimeout: REQUEST_TIMEOUT_MS,
    connectionsCheckingInterval: TIMEOUT_CHECK_INTERVAL_MS,
    keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS,
  };
  const server: Server = createServer(limits, (request, response) => {
    const path = (request.url ?? '/').split('?')[0];
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      response.writeHead(405, { allow: 'GET, HEAD' }).end();
      return;
    }
    if (path === '/metrics') {
      options.metrics.registry.metrics().then(
        (text) => response.writeHead(200, { 'content-type': options.metrics.registry.contentType }).end(text),
        (error: unknown) => {
          options.logger?.error({ err: error }, 'cannot collect the metrics');
          response.writeHead(500, { 'content-type': 'text/plain' }).end('cannot collect the metrics\n');
        },
      );
    } else if (path === '/healthz') {
      response.writeHead(200, { 'content-type': 'text/plain' }).end('ok\n');
    } else if (path === '/readyz') {
      // Fixed words only: error texts can name hosts and users, and stay in the logs (Readiness.report).
      const report = options.readiness.report();
      response
        .writeHead(report.ready ? 200 : 503, { 'content-type': 'application/json' })
        .end(`${JSON.stringify(report)}\n`);
    } else {
      response
        .writeHead(404, { 'content-type': 'text/plain' })
        .end('not found: try /metrics, /healthz, /readyz\n');
    }
  });
  server.maxConnections = MAX_CONNECTIONS;
  server.setTimeout(SOCKET_IDLE_TIMEOUT_MS); // no 'timeout' listener: Node destroys the idle socket
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
