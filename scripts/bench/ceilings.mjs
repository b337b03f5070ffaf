// The two ceilings walbox is compared with: how fast PostgreSQL decodes the backlog (pg_recvlogical to
// /dev/null), and how fast the broker takes records from its own Java producer (ProducerPerformance).
import { spawnSync } from 'node:child_process';
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
 * Records/s of kafkajs alone (the client walbox is built on), sending batches of `batchSize` with acks=all and
 * one request in flight, as walbox does: the part of the gap to the other ceilings that is the client library's.
 */
export async function measureKafkajs({ brokers, topic, records, recordSize, batchSize = 200 }) {
  const { Kafka, logLevel, Partitioners } = (await import('kafkajs')).default;
  const kafka = new Kafka({ brokers: [brokers], logLevel: logLevel.NOTHING });
  const producer = kafka.producer({
    createPartitioner: Partitioners.DefaultPartitioner,
    maxInFlightRequests: 1,
    idempotent: false,
  });
  await producer.connect();
  const value = 'x'.repeat(recordSize);
  const started = Date.now();
  try {
    for (let sent = 0; sent < records; sent += batchSize) {
      const messages = [];
      for (let i = sent; i < Math.min(records, sent + batchSize); i++) {
        messages.push({ key: `agg-${i % 1000}`, value, headers: { id: String(i), event_type: 'bench' } });
      }
      await producer.send({ topic, acks: -1, messages });
    }
  } finally {
    await producer.disconnect();
  }
  return records / ((Date.now() - started) / 1000);
}
