#!/usr/bin/env node
// The demo order service as a process (docker compose's demo-writer): DATABASE_URL, DEMO_RATE (orders/s).
import { writeDemoOrders } from './writeDemoOrders.js';

const databaseUrl = process.env['DATABASE_URL'];
const rate = Number(process.env['DEMO_RATE'] ?? '20');
if (databaseUrl === undefined || databaseUrl === '' || !Number.isFinite(rate) || rate <= 0) {
  process.stderr.write(
    'walbox demo writer: set DATABASE_URL, and DEMO_RATE to a positive number of orders/s\n',
  );
  process.exit(2);
}
const stop = new AbortController();
for (const signal of ['SIGTERM', 'SIGINT'] as const) process.on(signal, () => stop.abort());
process.stdout.write(
  `walbox demo writer: ${String(rate)} orders/s, each with its event in one transaction\n`,
);
writeDemoOrders({ databaseUrl, ratePerSecond: rate, signal: stop.signal }).then(
  (orders) => process.stdout.write(`walbox demo writer: stopped after ${String(orders)} orders\n`),
  (error: unknown) => {
    process.stderr.write(`walbox demo writer: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  },
);
