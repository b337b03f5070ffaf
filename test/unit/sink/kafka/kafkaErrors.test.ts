import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { toCreateTopicError } from '../../../../src/sink/kafka/kafkaErrors.js';

/** What kafkajs throws for a refused CreateTopics: an aggregate of per-topic protocol errors. */
function createTopicsRefusal(type: string): Error {
  const inner = Object.assign(new Error('Replication-factor is invalid'), { type });
  return Object.assign(new Error('Topic creation errors'), { errors: [inner] });
}

describe('toCreateTopicError', () => {
  for (const [type, fix] of [
    ['INVALID_REPLICATION_FACTOR', /--topic-replication-factor/],
    ['INVALID_CONFIG', /create the topic yourself/],
    ['POLICY_VIOLATION', /policy/],
    ['TOPIC_AUTHORIZATION_FAILED', /grant CREATE on the topic/],
    ['CLUSTER_AUTHORIZATION_FAILED', /grant CREATE on the cluster/],
    ['INVALID_TOPIC_EXCEPTION', /--topic-template/],
  ] as const) {
    it(`reports ${type} as a configuration error with its fix`, () => {
      const error = toCreateTopicError(createTopicsRefusal(type), ['orders']);
      assert.equal(error.code, 'SINK_MISCONFIGURED');
      assert.ok(error.topicScoped);
      assert.match(
        error.message,
        new RegExp(`^the cluster refused to create Kafka topic orders \\(${type}\\): `),
      );
      assert.match(error.message, fix);
    });
  }

  it('keeps an outage an outage', () => {
    const error = toCreateTopicError(new Error('Connection timeout'), ['orders']);
    assert.equal(error.code, 'SINK_UNAVAILABLE');
    assert.ok(error.retriable);
  });
});
