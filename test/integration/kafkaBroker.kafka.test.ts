import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import {
  ConfigResourceTypes,
  Kafka,
  logLevel,
  Partitioners,
  type Admin,
  type Consumer,
  type Producer,
} from 'kafkajs';

import { requireKafkaBrokers, uniqueName } from '../support/testEnv.js';
import { waitFor } from '../support/waitFor.js';

describe('the Kafka 4.x test broker with kafkajs', () => {
  const kafka = new Kafka({
    clientId: 'walbox-test',
    brokers: requireKafkaBrokers(),
    logLevel: logLevel.NOTHING,
  });
  const topic = uniqueName('walbox.test');
  let admin: Admin;
  let producer: Producer;
  let consumer: Consumer | undefined;

  before(async () => {
    admin = kafka.admin();
    await admin.connect();
    producer = kafka.producer({
      createPartitioner: Partitioners.DefaultPartitioner,
      allowAutoTopicCreation: false,
    });
    await producer.connect();
  });

  after(async () => {
    await consumer?.disconnect();
    await producer.disconnect();
    await admin.deleteTopics({ topics: [topic] }).catch(() => undefined);
    await admin.disconnect();
  });

  it('runs Kafka 4.x with topic auto-creation off', async () => {
    const cluster = await admin.describeCluster();
    assert.equal(cluster.brokers.length, 1);
    const [resource] = (
      await admin.describeConfigs({
        resources: [{ type: ConfigResourceTypes.BROKER, name: String(cluster.brokers[0]?.nodeId) }],
        includeSynonyms: false,
      })
    ).resources;
    const configs = new Map(resource?.configEntries.map((e) => [e.configName, e.configValue]));
    assert.equal(configs.get('auto.create.topics.enable'), 'false');
    assert.equal(configs.get('process.roles'), 'broker,controller', 'KRaft combined mode');
  });

  it('creates a topic, produces with acks=all and consumes it back in a consumer group', async () => {
    assert.equal(
      await admin.createTopics({
        topics: [{ topic, numPartitions: 3, replicationFactor: 1 }],
        waitForLeaders: true,
      }),
      true,
    );
    const metadata = await admin.fetchTopicMetadata({ topics: [topic] });
    assert.equal(metadata.topics[0]?.partitions.length, 3);

    const keys = ['order-1', 'order-2', 'order-3', 'order-4', 'order-5', 'order-6'];
    const sent = keys.flatMap((key) =>
      [1, 2, 3].map((n) => ({ key, value: `${key}#${n}`, headers: { id: `${key}-${n}` } })),
    );
    const acks = await producer.send({ topic, acks: -1, messages: sent });
    assert.ok(acks.every((a) => a.errorCode === 0));

    const groupId = uniqueName('walbox-test-group');
    consumer = kafka.consumer({ groupId });
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: true });
    const received: { key: string; value: string; partition: number; id: string }[] = [];
    await consumer.run({
      eachMessage: ({ message, partition }) => {
        received.push({
          key: message.key?.toString() ?? '',
          value: message.value?.toString() ?? '',
          partition,
          id: message.headers?.['id']?.toString() ?? '',
        });
        return Promise.resolve();
      },
    });
    await waitFor(() => received.length >= sent.length, { timeoutMs: 60_000, what: 'all messages consumed' });
    assert.equal(received.length, sent.length);
    for (const key of keys) {
      const ofKey = received.filter((m) => m.key === key);
      assert.deepEqual(
        ofKey.map((m) => m.value),
        [`${key}#1`, `${key}#2`, `${key}#3`],
        'per-key order',
      );
      assert.equal(new Set(ofKey.map((m) => m.partition)).size, 1, 'one partition per key');
      assert.deepEqual(
        ofKey.map((m) => m.id),
        [`${key}-1`, `${key}-2`, `${key}-3`],
      );
    }
    assert.ok(new Set(received.map((m) => m.partition)).size > 1, 'keys spread over partitions');

    // The group committed its offsets on the broker.
    await consumer.stop();
    const offsets = await admin.fetchOffsets({ groupId, topics: [topic] });
    const committed = offsets[0]?.partitions.reduce((sum, p) => sum + Number(p.offset), 0);
    assert.equal(committed, sent.length);
  });

  it('refuses to produce to a missing topic instead of creating it', async () => {
    const missing = uniqueName('walbox.missing');
    const shortLived = kafka.producer({
      createPartitioner: Partitioners.DefaultPartitioner,
      allowAutoTopicCreation: false,
      retry: { retries: 1, initialRetryTime: 100 },
    });
    await shortLived.connect();
    try {
      await assert.rejects(shortLived.send({ topic: missing, acks: -1, messages: [{ value: 'x' }] }));
    } finally {
      await shortLived.disconnect();
    }
    const topics = await admin.listTopics();
    assert.equal(topics.includes(missing), false);
  });
});
