#!/usr/bin/env node
// node scripts/bench/requestCost.mjs [value bytes, default 8192] [records per request, default 113] (after
// `npm run build`; no services): the CPU kafkajs spends to make and frame produce requests of walbox-shaped
// records (a key, a value, walbox's five headers, a timestamp), as the relay loads it (src/sink/kafka/kafkajs.ts,
// with walbox's patches), in µs per record. 113 records of 8 KB is about the sink's cut at 0.9 × the broker's
// max.message.bytes; `300 200` is the small-event drain's request. REQUEST_COST_ROOT=<another checkout or a copy
// of its dist, package.json and node_modules> measures that build (a before/after in one sitting).
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = process.env.REQUEST_COST_ROOT ?? join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const valueBytes = Number(process.argv[2] ?? 8192);
const perRequest = Number(process.argv[3] ?? 113);

await import(join(ROOT, 'dist', 'sink', 'kafka', 'kafkajs.js'));
const kafkajs = createRequire(join(ROOT, 'node_modules', 'kafkajs', 'package.json'));
const createProduceRequest = kafkajs('./src/protocol/requests/produce/v3/request.js');
const frameRequest = kafkajs('./src/protocol/request.js');
const Long = kafkajs('./src/utils/long.js');

const value = Buffer.alloc(valueBytes, 'x');
const messages = Array.from({ length: perRequest }, (_, i) => ({
  key: `agg-${i % 97}`,
  value,
  timestamp: String(1_764_000_000_000 + i),
  headers: {
    id: `0190c3a1-7d2e-7b3c-8f00-${String(i).padStart(12, '0')}`,
    aggregate_type: 'order',
    aggregate_id: `agg-${i % 97}`,
    event_type: 'OrderPlaced',
    occurred_at: '2026-12-06T12:00:00.000000Z',
  },
}));

async function makeFramedRequest(correlationId) {
  const request = createProduceRequest({
    acks: -1,
    timeout: 30_000,
    producerId: Long.fromInt(-1),
    topicData: [{ topic: 'bench.order', partitions: [{ partition: 0, messages }] }],
  });
  return (await frameRequest({ correlationId, clientId: 'walbox', request })).buffer.length;
}

// About 60 MB of requests measured, after a quarter of that to warm up.
const requests = Math.max(200, Math.round(60_000_000 / (valueBytes + 300) / perRequest));
for (let i = 0; i < requests / 4; i++) await makeFramedRequest(i);
const start = process.cpuUsage();
for (let i = 0; i < requests; i++) await makeFramedRequest(i);
const { user, system } = process.cpuUsage(start);
const records = requests * perRequest;
console.log(
  `${ROOT}: ${((user + system) / records).toFixed(2)} µs of CPU per record ` +
    `(${records} records of ${valueBytes} bytes, ${perRequest} per request)`,
);
