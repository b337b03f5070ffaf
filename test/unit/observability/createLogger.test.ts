import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { createLogger } from '../../../src/observability/createLogger.js';

const SECRET = 's3cret';

/** A logger at level trace writing into an array: one parsed JSON object (and its raw line) per call. */
function captureLogger(format: 'json' | 'pretty' = 'json'): {
  logger: ReturnType<typeof createLogger>;
  lines: string[];
  last: () => Record<string, unknown>;
} {
  const lines: string[] = [];
  const logger = createLogger('trace', {
    format,
    destination: { write: (line: string) => lines.push(line) },
  });
  return {
    logger,
    lines,
    last: () => JSON.parse(lines.at(-1) ?? '{}') as Record<string, unknown>,
  };
}

describe('createLogger', () => {
  it('censors secret keys at any depth', () => {
    const { logger, lines, last } = captureLogger();
    logger.trace({ a: { b: { c: { password: SECRET, note: 'kept' } } } }, 'nested');
    assert.ok(!lines.join('').includes(SECRET), lines.join(''));
    assert.deepEqual(last()['a'], { b: { c: { password: '[Redacted]', note: 'kept' } } });

    logger.info({ list: [{ token: SECRET }, { headers: { Authorization: `Bearer ${SECRET}` } }] }, 'arrays');
    logger.info({ sasl: { mechanism: 'plain', username: 'u', password: SECRET } }, 'kafkajs sasl block');
    logger.info({ db: { connectionString: `postgres://u:${SECRET}@h/db` }, apiKey: SECRET }, 'more');
    assert.ok(!lines.join('').includes(SECRET), lines.join(''));
  });

  it('censors URL passwords and password query parameters inside strings, keeping the rest readable', () => {
    const { logger, lines, last } = captureLogger();
    logger.info({ url: `postgres://u@h/db?password=${SECRET}` }, 'query parameter');
    assert.equal(last()['url'], 'postgres://u@h/db?password=***');
    logger.info({ url: `postgres://u:${SECRET}@h:5432/db?sslmode=require&sslpassword=${SECRET}` }, 'both');
    assert.equal(last()['url'], 'postgres://u:***@h:5432/db?sslmode=require&sslpassword=***');
    logger.info({ deep: { detail: `dial postgres://app:${SECRET}@db/orders failed` } }, 'in a text');
    assert.deepEqual(last()['deep'], { detail: 'dial postgres://app:***@db/orders failed' });
    assert.ok(!lines.join('').includes(SECRET), lines.join(''));
  });

  it('covers the configuration keys: databaseUrl and kafkaSaslPassword censored, kafkaSaslUsername kept', () => {
    const { logger, lines, last } = captureLogger();
    logger.info(
      {
        config: {
          databaseUrl: `postgres://relay:${SECRET}@db:5432/app`,
          kafkaSaslMechanism: 'scram-sha-512',
          kafkaSaslUsername: 'relay-user',
          kafkaSaslPassword: SECRET,
          kafkaSaslOauthbearerTokenFile: '/run/secrets/token',
          kafkaBrokers: ['kafka:9092'],
        },
      },
      'config',
    );
    assert.ok(!lines.join('').includes(SECRET), lines.join(''));
    assert.deepEqual(last()['config'], {
      databaseUrl: 'postgres://relay:***@db:5432/app',
      kafkaSaslMechanism: 'scram-sha-512',
      kafkaSaslUsername: 'relay-user',
      kafkaSaslPassword: '[Redacted]',
      kafkaSaslOauthbearerTokenFile: '/run/secrets/token',
      kafkaBrokers: ['kafka:9092'],
    });
    logger.info({ databaseUrl: `postgres://relay:${SECRET}@db/app` }, 'top level');
    assert.equal(last()['databaseUrl'], 'postgres://relay:***@db/app');
  });

  it('still serialises errors: type, message, stack, cause and own fields, with secrets censored', () => {
    const { logger, lines, last } = captureLogger();
    const cause = new Error('connection refused');
    const error = Object.assign(new TypeError(`cannot reach postgres://u:${SECRET}@h/db`, { cause }), {
      code: 'ECONNREFUSED',
      config: { password: SECRET, host: 'h' },
    });
    logger.error({ err: error, event_id: 'e-1' }, 'publish failed');
    const err = last()['err'] as Record<string, unknown>;
    assert.equal(err['type'], 'TypeError');
    assert.equal(err['message'], 'cannot reach postgres://u:***@h/db: connection refused');
    assert.match(String(err['stack']), /^TypeError: cannot reach postgres:\/\/u:\*\*\*@h\/db\n\s+at /);
    assert.match(String(err['stack']), /caused by: Error: connection refused/);
    assert.equal(err['code'], 'ECONNREFUSED');
    assert.deepEqual(err['config'], { password: '[Redacted]', host: 'h' });
    assert.equal(last()['event_id'], 'e-1');

    logger.error(error); // an error alone: its message becomes the log message
    assert.equal(last()['msg'], 'cannot reach postgres://u:***@h/db');
    assert.equal((last()['err'] as Record<string, unknown>)['type'], 'TypeError');
    logger.error({ err: error }); // the same with the error under err
    assert.equal(last()['msg'], 'cannot reach postgres://u:***@h/db');

    logger.warn({ result: { error: new Error('nested') } }, 'an error below the top level');
    assert.deepEqual(Object.keys((last()['result'] as { error: object }).error).sort(), [
      'message',
      'stack',
      'type',
    ]);
    assert.ok(!lines.join('').includes(SECRET), lines.join(''));
  });

  it('keeps ordinary fields readable, and the usual pino fields', () => {
    const { logger, last } = captureLogger();
    const when = new Date('2026-12-02T15:04:05.123Z');
    logger.debug(
      {
        slot: 'walbox',
        lsn: '0/16B3748',
        count: 3,
        ok: true,
        none: null,
        key: 'order-1',
        topic: 'orders',
        url: 'http://127.0.0.1:9464',
        at: when,
        brokers: ['a:9092', 'b:9092'],
        kafkaSecurity: { ssl: true, sasl: undefined },
      },
      'ordinary',
    );
    const entry = last();
    assert.equal(entry['level'], 'debug');
    assert.equal(entry['service'], 'walbox');
    assert.equal(entry['msg'], 'ordinary');
    assert.equal(typeof entry['time'], 'string');
    assert.equal(entry['slot'], 'walbox');
    assert.equal(entry['lsn'], '0/16B3748');
    assert.equal(entry['count'], 3);
    assert.equal(entry['ok'], true);
    assert.equal(entry['none'], null);
    assert.equal(entry['key'], 'order-1');
    assert.equal(entry['topic'], 'orders');
    assert.equal(entry['url'], 'http://127.0.0.1:9464');
    assert.equal(entry['at'], '2026-12-02T15:04:05.123Z');
    assert.deepEqual(entry['brokers'], ['a:9092', 'b:9092']);
    assert.deepEqual(entry['kafkaSecurity'], { ssl: true });
  });

  it('survives cycles and deep nesting', () => {
    const { logger, last } = captureLogger();
    const loop: Record<string, unknown> = { name: 'loop' };
    loop['self'] = loop;
    logger.info({ loop }, 'cycle');
    assert.deepEqual(last()['loop'], { name: 'loop', self: '[Circular]' });
    let deep: Record<string, unknown> = { password: SECRET };
    for (let i = 0; i < 50; i++) deep = { next: deep };
    logger.info({ deep }, 'deep');
    assert.ok(!JSON.stringify(last()).includes(SECRET));
  });

  it('censors child bindings and messages too, and in the pretty format', () => {
    const { logger, lines } = captureLogger();
    const child = logger.child({ component: 'sink', sasl: { password: SECRET } });
    child.info('from a child');
    child.child({ url: `postgres://u:${SECRET}@h/db` }).info('from a grandchild');
    child.child({ password: SECRET }, { level: 'debug' }).debug('from a child with options');
    logger.info(`connecting to postgres://u:${SECRET}@h/db`);
    logger.info('format %s', `password=${SECRET}`);
    assert.ok(!lines.join('').includes(SECRET), lines.join(''));
    assert.match(lines.join(''), /"component":"sink"/);
    assert.match(lines.join(''), /"url":"postgres:\/\/u:\*\*\*@h\/db"/);
    assert.match(lines.join(''), /"password":"\[Redacted\]","msg":"from a child with options"/);

    const pretty = captureLogger('pretty');
    pretty.logger.info({ config: { kafkaSaslPassword: SECRET, kafkaSaslUsername: 'relay-user' } }, 'pretty');
    assert.match(pretty.lines.join(''), /relay-user/);
    assert.ok(!pretty.lines.join('').includes(SECRET), pretty.lines.join(''));
  });
});
