import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { explainBadTopicName, resolveTopic, type TopicChoice } from '../../../src/core/topicName.js';

const event = { aggregateType: 'order', eventType: 'created' };
const byAggregate = { template: 'outbox.{aggregate_type}' };
const byBoth = { template: 'outbox.{aggregate_type}.{event_type}' };

/** The reason of a rejection; fails the test when the topic was accepted. */
function rejection(choice: TopicChoice, fields: Partial<typeof event>): string {
  const result = resolveTopic(choice, { ...event, ...fields });
  if (result.ok) assert.fail(`expected a rejection, got ${JSON.stringify(result)}`);
  return result.reason;
}

function allowed(source: string): RegExp {
  return new RegExp(`^(?:${source})$`);
}

describe('resolveTopic', () => {
  it('fills both placeholders, each as often as it appears', () => {
    assert.deepEqual(resolveTopic(byBoth, event), { ok: true, topic: 'outbox.order.created' });
    assert.deepEqual(resolveTopic({ template: '{event_type}-{aggregate_type}-{event_type}' }, event), {
      ok: true,
      topic: 'created-order-created',
    });
  });

  it('inserts $ replacement patterns literally, so the topic is rejected rather than rerouted', () => {
    for (const aggregateType of ['x$`', "x$'", 'x$&', 'x$$', 'x$1', 'x$<name>']) {
      const reason = rejection(byAggregate, { aggregateType });
      assert.ok(
        reason.startsWith(`topic ${JSON.stringify(`outbox.${aggregateType}`)} from --topic-template`),
        reason,
      );
      assert.match(reason, /may contain only ASCII letters, digits/);
      assert.ok(reason.includes(`aggregate_type ${JSON.stringify(aggregateType)} contains "$"`), reason);
    }
  });

  it('does not expand a placeholder written inside a value', () => {
    const reason = rejection(byBoth, { aggregateType: '{event_type}' });
    assert.ok(reason.startsWith('topic "outbox.{event_type}.created"'), reason);
    assert.match(reason, /aggregate_type "\{event_type\}" contains "\{"/);
    const swapped = rejection(
      { template: '{event_type}.{aggregate_type}' },
      { eventType: '{aggregate_type}' },
    );
    assert.ok(swapped.startsWith('topic "{aggregate_type}.order"'), swapped);
  });

  it('rejects an empty topic, naming the empty field', () => {
    const reason = rejection({ template: '{aggregate_type}' }, { aggregateType: '' });
    assert.equal(
      reason,
      'topic "" from --topic-template "{aggregate_type}" must be 1 to 249 characters long: aggregate_type is empty',
    );
    assert.match(
      rejection({ template: '{aggregate_type}{event_type}' }, { aggregateType: '', eventType: '' }),
      /: aggregate_type is empty, event_type is empty$/,
    );
  });

  it('rejects "." and "..", naming the field', () => {
    assert.match(
      rejection({ template: '{aggregate_type}' }, { aggregateType: '..' }),
      /cannot be "\." or "\.\.": aggregate_type is "\.\."$/,
    );
    assert.match(
      rejection({ template: '.{event_type}' }, { eventType: '' }),
      /^topic "\." .*: event_type is empty$/,
    );
  });

  it('rejects illegal characters, naming every field that has one, with control characters escaped', () => {
    const reason = rejection(byBoth, { aggregateType: 'bad type', eventType: 'a\nb' });
    assert.ok(reason.includes('aggregate_type "bad type" contains " "'), reason);
    assert.ok(reason.includes('event_type "a\\nb" contains "\\n"'), reason);
    assert.ok(!reason.includes('\n'), 'a control character never reaches last_error raw');
    assert.match(rejection(byAggregate, { aggregateType: 'café' }), /contains "é"/);
    assert.match(rejection(byAggregate, { aggregateType: 'a😀' }), /contains "😀"/);
  });

  it('rejects an over-long topic, naming the long field and quoting at most ~100 characters', () => {
    const aggregateType = 'a'.repeat(300);
    const reason = rejection(byAggregate, { aggregateType });
    assert.match(reason, /must be 1 to 249 characters long: aggregate_type is 300 characters long$/);
    assert.ok(reason.includes(`"outbox.${'a'.repeat(93)}"… (307 characters)`), reason);
    assert.ok(reason.length < 400, `reason of ${reason.length} characters`);
    assert.deepEqual(resolveTopic(byAggregate, { ...event, aggregateType: 'a'.repeat(242) }), {
      ok: true,
      topic: `outbox.${'a'.repeat(242)}`,
    });
    rejection(byAggregate, { aggregateType: 'a'.repeat(243) });
  });

  it('quotes a long illegal value truncated', () => {
    const aggregateType = `${'b'.repeat(150)} `;
    const reason = rejection(byAggregate, { aggregateType });
    assert.ok(reason.includes(`aggregate_type "${'b'.repeat(100)}"… (151 characters) contains " "`), reason);
  });

  describe('with --topic-allow', () => {
    const choice: TopicChoice = { ...byAggregate, allow: allowed('outbox\\.(order|payment)') };

    it('lets matching topics through', () => {
      assert.deepEqual(resolveTopic(choice, event), { ok: true, topic: 'outbox.order' });
      assert.deepEqual(resolveTopic(choice, { ...event, aggregateType: 'payment' }), {
        ok: true,
        topic: 'outbox.payment',
      });
    });

    it('rejects others, naming --topic-allow and the fields, matching the whole name only', () => {
      assert.equal(
        rejection(choice, { aggregateType: 'invoice' }),
        'topic "outbox.invoice" from --topic-template "outbox.{aggregate_type}" is not allowed by ' +
          '--topic-allow /^(?:outbox\\.(order|payment))$/: aggregate_type is "invoice"',
      );
      assert.match(rejection(choice, { aggregateType: 'orders' }), /is not allowed by --topic-allow/);
      assert.match(rejection(choice, { aggregateType: 'order.x' }), /is not allowed by --topic-allow/);
    });

    it('checks Kafka’s rules first', () => {
      assert.match(rejection(choice, { aggregateType: 'order$' }), /contains "\$"/);
    });

    it('stays anchored for a source with alternatives at the top level', () => {
      const allow = allowed('outbox\\.order|outbox\\.payment');
      assert.equal(resolveTopic({ ...byAggregate, allow }, { ...event, aggregateType: 'payment' }).ok, true);
      rejection({ ...byAggregate, allow }, { aggregateType: 'orderx' });
      rejection({ template: 'x.outbox.{aggregate_type}', allow }, {});
    });
  });

  it('leaves a fixed --topic alone: no substitution, no checks on the event, no allow-list', () => {
    assert.deepEqual(resolveTopic({ topic: 'fixed' }, { aggregateType: 'x$`', eventType: '' }), {
      ok: true,
      topic: 'fixed',
    });
    assert.deepEqual(resolveTopic({ topic: 'orders.{aggregate_type}' }, event), {
      ok: true,
      topic: 'orders.{aggregate_type}',
    });
  });
});

describe('explainBadTopicName', () => {
  it('states Kafka’s rules', () => {
    assert.equal(explainBadTopicName('outbox.order_v1-x'), undefined);
    assert.equal(explainBadTopicName(''), 'must be 1 to 249 characters long');
    assert.equal(explainBadTopicName('a'.repeat(250)), 'must be 1 to 249 characters long');
    assert.equal(explainBadTopicName('..'), 'cannot be "." or ".."');
    assert.equal(explainBadTopicName('a b'), 'may contain only ASCII letters, digits, ".", "_" and "-"');
  });
});
