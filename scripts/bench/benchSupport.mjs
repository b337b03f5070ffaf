// Helpers of the Debezium smoke script (plain ESM, run after `npm run build`).
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

import { ROOT } from '../stack/stack.mjs';

export const CLI = join(ROOT, 'dist', 'cli', 'main.js');
export const log = (m) => console.error(`bench: ${m}`);

export function runCli(args) {
  const r = spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`walbox ${args[0]} failed: ${r.stderr}`);
}

export async function createTopic(kafkaBrokers, topic, configEntries = []) {
  const { Kafka, logLevel } = (await import('kafkajs')).default;
  const admin = new Kafka({ brokers: [kafkaBrokers], logLevel: logLevel.NOTHING }).admin();
  await admin.connect();
  await admin.createTopics({
    topics: [{ topic, numPartitions: 3, replicationFactor: 1, configEntries }],
    waitForLeaders: true,
  });
  await admin.disconnect();
}
