import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { explainBadIdentifier, explainBadSlotName } from '../../../src/config/validateIdentifier.js';
import { explainBadTopicName } from '../../../src/core/topicName.js';

describe('identifier validation', () => {
  it('accepts plain identifiers and refuses quotes, spaces, semicolons and overlong names', () => {
    assert.equal(explainBadIdentifier('outbox_events'), undefined);
    assert.equal(explainBadIdentifier('Outbox2'), undefined);
    for (const bad of ['outbox"; DROP TABLE x; --', 'a b', '1abc', '', 'a-b', 'x'.repeat(64), 'ü']) {
      assert.notEqual(explainBadIdentifier(bad), undefined, bad);
    }
  });

  it('applies PostgreSQL slot name rules', () => {
    assert.equal(explainBadSlotName('walbox_1'), undefined);
    assert.notEqual(explainBadSlotName('Walbox'), undefined);
    assert.notEqual(explainBadSlotName('wal-box'), undefined);
  });

  it('applies Kafka topic rules', () => {
    assert.equal(explainBadTopicName('outbox.Order_created-v1'), undefined);
    for (const bad of ['', '.', '..', 'a b', 'x'.repeat(250), 'a/b'])
      assert.notEqual(explainBadTopicName(bad), undefined, bad);
  });
});
