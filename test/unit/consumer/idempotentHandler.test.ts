import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { EachMessagePayload, IHeaders } from 'kafkajs';
import type pg from 'pg';

import { idempotentHandler } from '../../../src/consumer/idempotentHandler.js';
import { ConfigError, DatabaseError, PreconditionError, WalboxError } from '../../../src/errors.js';

const EVENT_ID = '6f1c0c1e-0000-4000-8000-000000000001';

/** A pool whose one client records statements and answers the processed_events INSERT with `inserted` rows. */
function fakePool(behaviour: { inserted?: number; fail?: RegExp; failWith?: object } = {}) {
  const statements: string[] = [];
  const released: (Error | boolean | undefined)[] = [];
  let values: unknown[] | undefined;
  const client = {
    query(text: string, params?: unknown[]) {
      statements.push(text.split(/\s+/).slice(0, 3).join(' '));
      if (behaviour.fail?.test(text) === true)
        return Promise.reject(Object.assign(new Error(`failed: ${text}`), behaviour.failWith));
      if (text.startsWith('INSERT INTO')) {
        values = params;
        return Promise.resolve({ rows: [], rowCount: behaviour.inserted ?? 1 });
      }
      return Promise.resolve({ rows: [], rowCount: null });
    },
    release(error?: Error | boolean) {
      released.push(error);
    },
  };
  const pool = { connect: () => Promise.resolve(client) } as unknown as pg.Pool;
  return { pool, statements, released, values: () => values };
}

function payload(headers: IHeaders = {}): EachMessagePayload {
  return {
    topic: 'outbox.order',
    partition: 0,
    message: {
      key: Buffer.from('o-1'),
      value: Buffer.from('{"total": 42}'),
      timestamp: '0',
      attributes: 0,
      offset: '5',
      headers: {
        id: EVENT_ID,
        event_type: 'order.created',
        aggregate_type: 'order',
        aggregate_id: 'o-1',
        created_at: '2026-12-02T12:37:28.123400Z',
        ...headers,
      },
    },
    heartbeat: () => Promise.resolve(),
    pause: () => () => undefined,
  };
}

describe('idempotentHandler', () => {
  it('records the event and runs the handler in one transaction, with bound values', async () => {
    const fake = fakePool();
    const seen: string[] = [];
    const handler = idempotentHandler({
      pool: fake.pool,
      consumerName: 'shipping',
      schema: 'shop',
      handle: async (event, client) => {
        seen.push(event.id);
        await client.query('UPDATE orders SET shipped = true');
      },
    });
    await handler(payload());
    assert.deepEqual(seen, [EVENT_ID]);
    assert.deepEqual(fake.statements, [
      'BEGIN',
      'INSERT INTO "shop"."processed_events"',
      'UPDATE orders SET',
      'COMMIT',
    ]);
    assert.deepEqual(fake.values(), ['shipping', EVENT_ID]);
    assert.deepEqual(fake.released, [undefined]);
  });

  it('skips a duplicate without calling the handler', async () => {
    const fake = fakePool({ inserted: 0 });
    let calls = 0;
    const handler = idempotentHandler({
      pool: fake.pool,
      consumerName: 'shipping',
      handle: () => {
        calls++;
        return Promise.resolve();
      },
    });
    await handler(payload());
    assert.equal(calls, 0);
    assert.deepEqual(fake.statements, ['BEGIN', 'INSERT INTO "public"."processed_events"', 'ROLLBACK']);
    assert.deepEqual(fake.released, [undefined]);
  });

  it('rolls back and rethrows the handler’s own error unchanged', async () => {
    const fake = fakePool();
    const boom = new Error('boom');
    const handler = idempotentHandler({
      pool: fake.pool,
      consumerName: 'shipping',
      handle: () => Promise.reject(boom),
    });
    await assert.rejects(handler(payload()), (error: unknown) => error === boom);
    assert.deepEqual(fake.statements.at(-1), 'ROLLBACK');
    assert.deepEqual(fake.released, [undefined]);
  });

  it('destroys the connection when even ROLLBACK fails', async () => {
    const fake = fakePool({ fail: /^(COMMIT|ROLLBACK)/ });
    const handler = idempotentHandler({
      pool: fake.pool,
      consumerName: 'c',
      handle: () => Promise.resolve(),
    });
    await assert.rejects(
      handler(payload()),
      (error: unknown) =>
        error instanceof DatabaseError && error.retriable && /COMMIT failed/.test(error.message),
    );
    assert.equal(fake.released.length, 1);
    assert.ok(fake.released[0] instanceof Error);
  });

  it('says how to create processed_events when it is missing, and does not ask for a retry', async () => {
    const fake = fakePool({ fail: /^INSERT/, failWith: { code: '42P01' } });
    const handler = idempotentHandler({
      pool: fake.pool,
      consumerName: 'c',
      handle: () => Promise.resolve(),
    });
    await assert.rejects(
      handler(payload()),
      (error: unknown) =>
        error instanceof PreconditionError &&
        !error.retriable &&
        /walbox migrate --consumer/.test(error.message),
    );
  });

  it('refuses a message without an id before touching the database', async () => {
    const fake = fakePool();
    const handler = idempotentHandler({
      pool: fake.pool,
      consumerName: 'c',
      handle: () => Promise.resolve(),
    });
    await assert.rejects(
      handler(payload({ id: undefined })),
      (error: unknown) =>
        error instanceof WalboxError && error.code === 'DECODE_FAILED' && /no id header/.test(error.message),
    );
    assert.deepEqual(fake.statements, []);
  });

  it('validates the schema and the consumer name when it is built', () => {
    const { pool } = fakePool();
    const handle = () => Promise.resolve();
    assert.throws(
      () => idempotentHandler({ pool, consumerName: 'c', schema: 'x"; DROP TABLE t; --', handle }),
      (error: unknown) => error instanceof ConfigError && /invalid schema/.test(error.message),
    );
    assert.throws(
      () => idempotentHandler({ pool, consumerName: ' ', handle }),
      (error: unknown) => error instanceof ConfigError && /consumerName/.test(error.message),
    );
  });
});
