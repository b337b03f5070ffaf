// The ceilings walbox is compared with: how fast PostgreSQL decodes the backlog (pg_recvlogical to /dev/null),
// how fast the broker takes records from its own Java producer (ProducerPerformance), and how fast two
// JavaScript clients alone send walbox-shaped records (kafkajs, walbox's; @platformatic/kafka, for comparison).
import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';

import { KAFKA_VERSION } from '../stack/kafka.mjs';

/** Seconds pg_recvlogical needs to decode the slot up to `endLsn` with pgoutput (as walbox and Debezium read). */
export function decodeWithRecvlogical({ bin, databaseUrl, slot, publication, endLsn }) {
  const started = Date.now();
  const run = spawnSync(
    join(bin, 'pg_recvlogical'),
    [
      '-d',
      databaseUrl,
      '-S',
      slot,
      '--start',
      '-E',
      endLsn,
      '-f',
      '/dev/null',
      '--no-loop',
      '-o',
      'proto_version=1',
      '-o',
      `publication_names=${publication}`,
    ],
    { encoding: 'utf8' },
  );
  if (run.status !== 0) throw new Error(`pg_recvlogical failed: ${run.stderr}`);
  return (Date.now() - started) / 1000;
}

/**
 * Records/s of Kafka's own producer (acks=all, like walbox) sending `records` of `recordSize` bytes to `topic`:
 * what one client can push into this broker on this machine.
 */
export function measureProducer({ root, brokers, topic, records, recordSize }) {
  const lib = join(root, '.cache', 'kafka', KAFKA_VERSION, 'lib', '*');
  const run = spawnSync(
    'java',
    [
      '-Xmx256m',
      '-cp',
      lib,
      `-Dlog4j2.configurationFile=${join(root, 'tools', 'kafka', 'log4j2.properties')}`,
      'org.apache.kafka.tools.ProducerPerformance',
      '--topic',
      topic,
      '--num-records',
      String(records),
      '--record-size',
      String(recordSize),
      '--throughput',
      '-1',
      '--producer-props',
      `bootstrap.servers=${brokers}`,
      'acks=all',
    ],
    { encoding: 'utf8', timeout: 600_000 },
  );
  const summary = /(\d+) records sent, ([\d.]+) records\/sec/.exec(
    run.stdout.split('\n').filter(Boolean).at(-1) ?? '',
  );
  if (run.status !== 0 || summary === null) {
    throw new Error(
      `ProducerPerformance failed (${run.status}): ${run.stderr.slice(-500)}${run.stdout.slice(-500)}`,
    );
  }
  return Number(summary[2]);
}

/**
 * The records both clients send, shaped like walbox's: a key from 1000 aggregates, a value of `recordSize`
 * bytes, and walbox's five default headers (id, event_type, aggregate_type, aggregate_id, created_at).
 */
function makeBatches({ records, recordSize, batchSize }) {
  const value = 'x'.repeat(recordSize);
  const createdAt = new Date().toISOString();
  const batches = [];
  for (let sent = 0; sent < records; sent += batchSize) {
    const batch = [];
    for (let i = sent; i < Math.min(records, sent + batchSize); i++) {
      const key = `agg-${i % 1000}`;
      batch.push({
        key,
        value,
        headers: {
          id: randomUUID(),
          event_type: 'bench',
          aggregate_type: 'order',
          aggregate_id: key,
          created_at: createdAt,
        },
      });
    }
    batches.push(batch);
  }
  return batches;
}

/** Records/s and this process's CPU µs per record while `send` takes every batch in turn. */
async function timeSends(batches, send) {
  const records = batches.reduce((n, b) => n + b.length, 0);
  const cpu = process.cpuUsage();
  const started = process.hrtime.bigint();
  for (const batch of batches) await send(batch);
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const used = process.cpuUsage(cpu);
  return {
    recordsPerSecond: Math.round(records / seconds),
    cpuMicrosPerRecord: Math.round(((used.user + used.system) / records) * 10) / 10,
  };
}

/**
 * kafkajs alone (the client walbox is built on), sending batches of `batchSize` with acks=all and one request in
 * flight, with walbox's partitioner and patches, as walbox does: the part of the gap to the other ceilings that
 * is the client library's.
 */
export async function measureKafkajs({ brokers, topic, records, recordSize, batchSize = 200 }) {
  const { Kafka, logLevel } = (await import('kafkajs')).default;
  // walbox's partitioner: the same partitions as kafkajs's default, without its BigInt hashing.
  const { createKeyPartitioner } = await import('../../dist/sink/kafka/createKeyPartitioner.js');
  const kafka = new Kafka({ brokers: [brokers], logLevel: logLevel.NOTHING });
  const producer = kafka.producer({
    createPartitioner: createKeyPartitioner,
    maxInFlightRequests: 1,
    idempotent: false,
  });
  await producer.connect();
  try {
    return await timeSends(makeBatches({ records, recordSize, batchSize }), (messages) =>
      producer.send({ topic, acks: -1, messages }),
    );
  } finally {
    await producer.disconnect();
  }
}

/**
 * The same sends with @platformatic/kafka (a second pure-JavaScript client, a dev dependency used only here):
 * what a client switch would buy, measured on the same broker, records and batching as kafkajs alone.
 */
export async function measurePlatformatic({ brokers, topic, records, recordSize, batchSize = 200 }) {
  const { Producer, ProduceAcks, stringSerializers } = await import('@platformatic/kafka');
  const producer = new Producer({
    clientId: 'walbox-bench',
    bootstrapBrokers: [brokers],
    serializers: stringSerializers,
    idempotent: false,
    acks: ProduceAcks.ALL,
  });
  try {
    // The first send fetches metadata and connects: done before the clock starts, as kafkajs's connect() is.
    await producer.send({ messages: [{ topic, key: 'warm-up', value: 'x' }] });
    return await timeSends(makeBatches({ records, recordSize, batchSize }), (batch) =>
      producer.send({ messages: batch.map((m) => ({ ...m, topic })) }),
    );
  } finally {
    await producer.close();
  }
}
