import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { withRelaySetup } from '../support/relaySetup.js';
import { runCli } from '../support/runCli.js';
import { TopicReader } from '../support/topicReader.js';

const STREAMING = /streaming from the replication slot/;

describe('--create-topics', () => {
  it('creates a missing topic on a one-broker cluster with the defaults (the broker default replication factor)', async () => {
    await withRelaySetup(async (setup) => {
      const relay = setup.startRelay('--create-topics');
      await relay.waitForLine(STREAMING);
      const topic = setup.fixture.topicFor('invoice');
      let reader: TopicReader | undefined;
      try {
        const [row] = await setup.fixture.query<{ id: string }>(
          `INSERT INTO ${setup.table} (aggregate_type, aggregate_id, event_type, payload)
           VALUES ('invoice', 'i-1', 'InvoiceIssued', '{}') RETURNING id::text`,
        );
        const created = await relay.waitForLine(/created Kafka topics/);
        assert.match(created, /"replicationFactor":"broker default"/);
        reader = await TopicReader.start([topic]);
        await reader.waitForIds([row?.id ?? '']);
        assert.ok(
          !relay.lines.some((l) => /INVALID_REPLICATION_FACTOR|failed; retrying/.test(l)),
          relay.lines.join('\n'),
        );
      } finally {
        await reader?.stop();
        await setup.fixture.deleteTopic(topic).catch(() => undefined);
      }
    });
  });

  it('refuses a replication factor above the number of brokers at startup: exit 2, one line', async () => {
    await withRelaySetup(async (setup) => {
      const result = await runCli([
        'run',
        ...setup.fixture.relayArgs('--create-topics', '--topic-replication-factor', '3'),
      ]);
      assert.equal(result.code, 2, result.stderr);
      assert.equal(result.stderr.trim().split('\n').length, 1, result.stderr);
      assert.match(
        result.stderr,
        /--topic-replication-factor 3 is more than the 1 broker\(s\) of Kafka at .*: lower it, or leave it unset for the broker's default\.replication\.factor/,
      );
    });
  });
});
