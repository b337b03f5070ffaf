import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { Kafka, logLevel, type Consumer, type EachMessagePayload } from 'kafkajs';
import pg from 'pg';

import {
  ConfigError,
  enqueue,
  idempotentHandler,
  migrate,
  type ConsumedEvent,
  type EnqueueOptions,
} from '../../src/index.js';
import { withRelaySetup } from '../support/relaySetup.js';
import { withClient } from '../support/testDatabase.js';
import { requireKafkaBrokers, uniqueName } from '../support/testEnv.js';
import { waitFor } from '../support/waitFor.js';
import type { WalFixture } from '../support/walFixture.js';

const STREAMING = /streaming from the replication slot/;
const ORDERS = 20;

/**
 * The two sides of the library in the fixture's schema: the shop's `orders` (written with their events by the
 * service), and the warehouse's `shipments` plus processed_events (written by the consumer). No unique key on
 * shipments.order_id: a duplicate shipment must show up in the counts, not as a constraint error.
 */
async function createShop(fixture: WalFixture): Promise<string> {
  const schema = pg.escapeIdentifier(fixture.schema);
  await withClient((client) =>
    migrate(client, {
      schema: fixture.schema,
      table: 'outbox_events',
      publication: fixture.publication,
      consumer: true,
      outbox: false,
    }),
  );
  await fixture.query(`CREATE TABLE ${schema}.orders (id text PRIMARY KEY, total int NOT NULL)`);
  await fixture.query(
    `CREATE TABLE ${schema}.shipments (
       id bigserial PRIMARY KEY, order_id text NOT NULL, event_id uuid NOT NULL, total int NOT NULL)`,
  );
  return schema;
}

/** The service: an order row and its event in one transaction, committed (or rolled back) together. */
async function placeOrder(
  client: pg.ClientBase,
  schema: string,
  order: { id: string; total: number },
  options: EnqueueOptions & { rollback?: boolean } = {},
): Promise<string> {
  await client.query('BEGIN');
  try {
    await client.query(`INSERT INTO ${pg.escapeIdentifier(schema)}.orders (id, total) VALUES ($1, $2)`, [
      order.id,
      order.total,
    ]);
    const event = await enqueue(
      client,
      {
        aggregateType: 'order',
        aggregateId: order.id,
        eventType: 'order.placed',
        payload: { orderId: order.id, total: order.total },
        headers: { traceparent: `00-${order.id}` },
      },
      { ...options, schema },
    );
    await client.query(options.rollback === true ? 'ROLLBACK' : 'COMMIT');
    return event.id;
  } catch (error) {
    await client.query('ROLLBACK');
    throw error;
  }
}

function ordersNumbered(prefix: string): { id: string; total: number }[] {
  return Array.from({ length: ORDERS }, (_, i) => ({ id: `${prefix}-${i + 1}`, total: 100 + i }));
}

interface Shipping {
  readonly consumer: Consumer;
  /** Event ids the handler ran for (failed attempts included): the effects that were attempted. */
  readonly handled: string[];
  readonly events: ConsumedEvent[];
  /** Event ids whose eachMessage finished (processed or skipped as a duplicate): Kafka's deliveries. */
  readonly delivered: string[];
  waitForDelivered(count: number): Promise<void>;
}

/**
 * The warehouse: a kafkajs consumer whose eachMessage is the library's idempotentHandler. Its handler writes a
 * shipment through the transaction's client; with `failOnce`, it throws after writing that order's shipment the
 * first time, so the rollback has something to undo.
 */
async function startShipping(
  fixture: WalFixture,
  pool: pg.Pool,
  options: { groupId: string; consumerName: string; failOnce?: string },
): Promise<Shipping> {
  const kafka = new Kafka({
    clientId: 'walbox-test-shipping',
    brokers: requireKafkaBrokers(),
    logLevel: logLevel.NOTHING,
  });
  const consumer = kafka.consumer({ groupId: options.groupId, maxWaitTimeInMs: 200 });
  const handled: string[] = [];
  const events: ConsumedEvent[] = [];
  const delivered: string[] = [];
  let failed = false;
  let fatal: unknown;
  // A crash kafkajs does not restart from would otherwise look like a slow consumer until the timeout.
  consumer.on(consumer.events.CRASH, ({ payload }) => {
    if (!payload.restart) fatal = payload.error;
  });
  const handler = idempotentHandler({
    pool,
    consumerName: options.consumerName,
    schema: fixture.schema,
    handle: async (event, client) => {
      handled.push(event.id);
      events.push(event);
      const { orderId, total } = event.payload as { orderId: string; total: number };
      await client.query(
        `INSERT INTO ${pg.escapeIdentifier(fixture.schema)}.shipments (order_id, event_id, total) VALUES ($1, $2, $3)`,
        [orderId, event.id, total],
      );
      if (orderId === options.failOnce && !failed) {
        failed = true;
        throw new Error(`simulated failure after shipping ${orderId}`);
      }
    },
  });
  await consumer.connect();
  await consumer.subscribe({ topic: fixture.topicFor('order'), fromBeginning: true });
  await consumer.run({
    eachMessage: async (payload: EachMessagePayload) => {
      await handler(payload);
      delivered.push(payload.message.headers?.['id']?.toString() ?? '');
    },
  });
  return {
    consumer,
    handled,
    events,
    delivered,
    async waitForDelivered(count) {
      await waitFor(
        () => {
          if (fatal !== undefined) throw new Error('the consumer crashed', { cause: fatal });
          return delivered.length >= count;
        },
        { timeoutMs: 120_000, intervalMs: 100, what: `${count} deliveries (have ${delivered.length})` },
      );
    },
  };
}

async function shipmentsPerOrder(schema: string): Promise<Record<string, number>> {
  const rows = await withClient(
    async (client) =>
      (
        await client.query<{ order_id: string; n: string }>(
          `SELECT order_id, count(*) AS n FROM ${pg.escapeIdentifier(schema)}.shipments GROUP BY order_id`,
        )
      ).rows,
  );
  return Object.fromEntries(rows.map((r) => [r.order_id, Number(r.n)]));
}

async function processedCount(schema: string, consumerName: string): Promise<number> {
  const rows = await withClient(
    async (client) =>
      (
        await client.query<{ n: string }>(
          `SELECT count(*) AS n FROM ${pg.escapeIdentifier(schema)}.processed_events WHERE consumer = $1`,
          [consumerName],
        )
      ).rows,
  );
  return Number(rows[0]?.n);
}

function countBy(values: readonly string[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const value of values) counts[value] = (counts[value] ?? 0) + 1;
  return counts;
}

function onceEach(keys: readonly string[], times = 1): Record<string, number> {
  return Object.fromEntries(keys.map((key) => [key, times]));
}

describe('library API: enqueue in the service, idempotentHandler in the consumer', () => {
  it('pg.Client: orders and events commit together; each order ships exactly once, through relay duplicates and a second consumer group', async () => {
    await withRelaySetup(async ({ fixture, reader, startRelay }) => {
      const schema = await createShop(fixture);
      const relay = startRelay();
      await relay.waitForLine(STREAMING);

      const orders = ordersNumbered('c');
      const client = new pg.Client({ connectionString: fixture.databaseUrl });
      await client.connect();
      const ids: string[] = [];
      try {
        await placeOrder(client, fixture.schema, { id: 'c-rolled-back', total: 1 }, { rollback: true });
        for (const order of orders) ids.push(await placeOrder(client, fixture.schema, order));
      } finally {
        await client.end();
      }
      const [written] = await fixture.query<{ orders: string; events: string }>(
        `SELECT (SELECT count(*) FROM ${schema}.orders) AS orders, (SELECT count(*) FROM ${schema}.outbox_events) AS events`,
      );
      assert.deepEqual(written, { orders: String(ORDERS), events: String(ORDERS) }, 'the rollback took both');

      const pool = new pg.Pool({ connectionString: fixture.databaseUrl, max: 4 });
      const consumers: Consumer[] = [];
      try {
        const first = await startShipping(fixture, pool, {
          groupId: uniqueName('ship'),
          consumerName: 'shipping',
        });
        consumers.push(first.consumer);
        await first.waitForDelivered(ORDERS);
        assert.deepEqual(await shipmentsPerOrder(fixture.schema), onceEach(orders.map((o) => o.id)));
        assert.deepEqual(countBy(first.handled), onceEach(ids));

        // The typed event carries what the service wrote, as walbox sends it.
        const rows = await fixture.query<{ id: string; aggregate_id: string; created_at: string }>(
          `SELECT id::text, aggregate_id,
                  to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS created_at
             FROM ${schema}.outbox_events`,
        );
        const byId = new Map(first.events.map((e) => [e.id, e]));
        for (const row of rows) {
          const event = byId.get(row.id);
          assert.ok(event, `event ${row.id} handled`);
          assert.deepEqual(
            {
              eventType: event.eventType,
              aggregateType: event.aggregateType,
              aggregateId: event.aggregateId,
              createdAt: event.createdAt,
              payload: event.payload,
              traceparent: event.headers['traceparent'],
            },
            {
              eventType: 'order.placed',
              aggregateType: 'order',
              aggregateId: row.aggregate_id,
              createdAt: row.created_at,
              payload: {
                orderId: row.aggregate_id,
                total: orders.find((o) => o.id === row.aggregate_id)?.total,
              },
              traceparent: `00-${row.aggregate_id}`,
            },
          );
        }

        // Redelivery 1: the relay published some events twice (a kill -9 before it marked them, guarantee G4). The
        // copies are real messages at new offsets, with the same id header.
        const topic = await reader();
        await topic.waitForIds(ids);
        const copies = topic.messages.slice(0, 3);
        const kafka = new Kafka({
          clientId: 'walbox-test-dup',
          brokers: requireKafkaBrokers(),
          logLevel: logLevel.NOTHING,
        });
        const producer = kafka.producer();
        await producer.connect();
        await producer.send({
          topic: fixture.topicFor('order'),
          messages: copies.map((m) => ({
            key: m.key,
            value: m.value,
            headers: { ...m.headers },
            partition: m.partition,
          })),
        });
        await producer.disconnect();
        await first.waitForDelivered(ORDERS + copies.length);

        // Redelivery 2: a new consumer group with the same consumer name reads the whole topic again.
        const ends = await fixture.topicEndOffsets(fixture.topicFor('order'));
        const onTopic = [...ends.values()].reduce((sum, end) => sum + Number(end), 0);
        assert.equal(onTopic, ORDERS + copies.length, 'the rolled-back order was never published');
        const second = await startShipping(fixture, pool, {
          groupId: uniqueName('ship'),
          consumerName: 'shipping',
        });
        consumers.push(second.consumer);
        await second.waitForDelivered(onTopic);

        assert.equal(second.delivered.length, onTopic, 'the second group got every message');
        assert.deepEqual(countBy(first.delivered), {
          ...onceEach(ids),
          ...onceEach(
            copies.map((m) => m.headers['id'] ?? ''),
            2,
          ),
        });
        assert.deepEqual(first.handled.length, ORDERS, 'no handler call for the relay duplicates');
        assert.deepEqual(second.handled, [], 'no handler call for the redelivered topic');
        assert.deepEqual(await shipmentsPerOrder(fixture.schema), onceEach(orders.map((o) => o.id)));
        assert.equal(await processedCount(fixture.schema, 'shipping'), ORDERS);
      } finally {
        for (const consumer of consumers) await consumer.disconnect();
        await pool.end();
      }
    });
  });

  it('PoolClient: a pool is refused, its clients work; a handler failure rolls back and the retry ships once, also after a seek to the beginning', async () => {
    await withRelaySetup(async ({ fixture, startRelay }) => {
      const schema = await createShop(fixture);
      const relay = startRelay();
      await relay.waitForLine(STREAMING);
      const pool = new pg.Pool({ connectionString: fixture.databaseUrl, max: 4 });
      let shipping: Shipping | undefined;
      try {
        await assert.rejects(
          enqueue(
            pool,
            { aggregateType: 'order', aggregateId: 'p-0', eventType: 'order.placed', payload: {} },
            {
              schema: fixture.schema,
            },
          ),
          (error: unknown) =>
            error instanceof ConfigError &&
            /got a pool; pass the client of your transaction/.test(error.message),
        );

        // Four writers at once, each on its own pooled client, with the aggregate lock.
        const orders = ordersNumbered('p');
        const ids = new Map<string, string>();
        await Promise.all(
          [0, 1, 2, 3].map(async (writer) => {
            for (const order of orders.filter((_, i) => i % 4 === writer)) {
              const client = await pool.connect();
              try {
                ids.set(order.id, await placeOrder(client, fixture.schema, order, { lockAggregate: true }));
              } finally {
                client.release();
              }
            }
          }),
        );
        const [events] = await fixture.query<{ n: string }>(
          `SELECT count(*) AS n FROM ${schema}.outbox_events`,
        );
        assert.equal(Number(events?.n), ORDERS);

        const failing = 'p-7';
        const failingId = ids.get(failing) ?? '';
        shipping = await startShipping(fixture, pool, {
          groupId: uniqueName('ship'),
          consumerName: 'shipping',
          failOnce: failing,
        });
        await shipping.waitForDelivered(ORDERS);
        assert.deepEqual(await shipmentsPerOrder(fixture.schema), onceEach(orders.map((o) => o.id)));
        // The failing event ran twice: the first attempt's shipment and processed_events row were rolled back.
        assert.deepEqual(countBy(shipping.handled), { ...onceEach([...ids.values()]), [failingId]: 2 });
        assert.equal(await processedCount(fixture.schema, 'shipping'), ORDERS);

        // Redelivery: the same group seeks back to the start of every partition.
        const ends = await fixture.topicEndOffsets(fixture.topicFor('order'));
        const delivered = shipping.delivered.length;
        for (const partition of ends.keys()) {
          shipping.consumer.seek({ topic: fixture.topicFor('order'), partition, offset: '0' });
        }
        await shipping.waitForDelivered(delivered + ORDERS);
        assert.equal(shipping.handled.length, ORDERS + 1, 'no handler call after the seek');
        assert.deepEqual(await shipmentsPerOrder(fixture.schema), onceEach(orders.map((o) => o.id)));
        assert.equal(await processedCount(fixture.schema, 'shipping'), ORDERS);
      } finally {
        await shipping?.consumer.disconnect();
        await pool.end();
      }
    });
  });
});
