import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { OPTION_SPECS, toEnvName } from '../../../src/config/configSchema.js';
import { loadConfig } from '../../../src/config/loadConfig.js';
import { ConfigError } from '../../../src/errors.js';

describe('loadConfig', () => {
  it('returns the documented defaults, frozen, with a value for every option', () => {
    const config = loadConfig();
    assert.ok(Object.isFrozen(config));
    assert.equal(config.mode, 'wal');
    assert.equal(config.slot, 'walbox');
    assert.equal(config.publication, 'walbox');
    assert.equal(config.schema, 'public');
    assert.equal(config.table, 'outbox_events');
    assert.equal(config.batchSize, 200);
    assert.equal(config.lingerMs, 5);
    assert.equal(config.pollIntervalMs, 1_000);
    assert.equal(config.maxAttempts, 10);
    assert.equal(config.retryBackoffInitialMs, 1_000);
    assert.equal(config.retryBackoffMaxMs, 300_000);
    assert.equal(config.statusIntervalMs, 10_000);
    assert.equal(config.metricsHost, '127.0.0.1');
    assert.equal(config.metricsPort, 9464);
    assert.equal(config.startupTimeoutMs, 60_000);
    assert.equal(config.shutdownTimeoutMs, 30_000);
    assert.equal(config.topicTemplate, 'outbox.{aggregate_type}');
    assert.deepEqual(Object.keys(config).sort(), OPTION_SPECS.map((s) => s.key).sort());
  });

  it('lets the environment override defaults and flags override the environment', () => {
    const env = { WALBOX_BATCH_SIZE: '50', WALBOX_SLOT: 'from_env', WALBOX_POLL_INTERVAL: '250ms' };
    const config = loadConfig({ env, flags: { slot: 'from_flag' } });
    assert.equal(config.batchSize, 50);
    assert.equal(config.slot, 'from_flag');
    assert.equal(config.pollIntervalMs, 250);
  });

  it('falls back to DATABASE_URL and KAFKA_BROKERS, but WALBOX_* wins', () => {
    const config = loadConfig({
      env: {
        DATABASE_URL: 'postgres://a@h1/db',
        KAFKA_BROKERS: 'k1:9092, k2:9093',
        WALBOX_DATABASE_URL: 'postgres://b@h2/db',
      },
    });
    assert.equal(config.databaseUrl, 'postgres://b@h2/db');
    assert.deepEqual(config.kafkaBrokers, ['k1:9092', 'k2:9093']);
  });

  it('reads a secret from WALBOX_<OPTION>_FILE', () => {
    const config = loadConfig({
      env: { WALBOX_DATABASE_URL_FILE: '/run/secrets/db' },
      readFile: (path) => (path === '/run/secrets/db' ? 'postgres://u:secret@db/app\n' : ''),
    });
    assert.equal(config.databaseUrl, 'postgres://u:secret@db/app');
  });

  it('names every bad setting and its source in one line', () => {
    assert.throws(
      () =>
        loadConfig({ env: { WALBOX_BATCH_SIZE: 'abc' }, flags: { mode: 'push', pollIntervalMs: 'soon' } }),
      (error: unknown) => {
        assert.ok(error instanceof ConfigError);
        assert.doesNotMatch(error.message, /\n/);
        assert.match(error.message, /--batch-size \(from WALBOX_BATCH_SIZE\) "abc": must be an integer/);
        assert.match(error.message, /--mode "push": must be one of wal, poll/);
        assert.match(error.message, /--poll-interval "soon": must be a duration/);
        return true;
      },
    );
  });

  it('rejects an injection attempt in every identifier option', () => {
    const attack = 'outbox"; DROP TABLE x; --';
    for (const key of ['schema', 'table', 'publication', 'slot'] as const) {
      assert.throws(
        () => loadConfig({ flags: { [key]: attack } }),
        (error: unknown) => {
          assert.ok(error instanceof ConfigError);
          assert.match(error.message, /invalid --/);
          return true;
        },
      );
    }
  });

  it('never echoes a database URL, which may hold a password', () => {
    assert.throws(
      () => loadConfig({ flags: { databaseUrl: 'mysql://user:hunter2@db/app' } }),
      (error: unknown) => {
        assert.ok(error instanceof ConfigError);
        assert.match(error.message, /--database-url: has scheme "mysql:"/);
        assert.doesNotMatch(error.message, /hunter2/);
        return true;
      },
    );
  });

  it('reports missing required options with the variables that could supply them', () => {
    assert.throws(
      () => loadConfig({ required: ['databaseUrl'] }),
      /missing --database-url: set the flag or WALBOX_DATABASE_URL or DATABASE_URL/,
    );
  });

  it('rejects unknown WALBOX_* variables instead of ignoring a typo', () => {
    assert.throws(
      () => loadConfig({ env: { WALBOX_BATCHSIZE: '5' } }),
      /unknown environment variable WALBOX_BATCHSIZE/,
    );
  });

  it('validates ranges, broker lists and topic templates', () => {
    assert.throws(() => loadConfig({ flags: { batchSize: '0' } }), /--batch-size "0": must be at least 1/);
    assert.equal(loadConfig({ flags: { lingerMs: '0' } }).lingerMs, 0);
    assert.throws(() => loadConfig({ flags: { lingerMs: '2s' } }), /--linger "2s": must be at most/);
    assert.throws(() => loadConfig({ flags: { kafkaBrokers: 'localhost' } }), /not host:port/);
    assert.throws(
      () => loadConfig({ flags: { topicTemplate: 'outbox.{aggregate}' } }),
      /unknown placeholder \{aggregate\}/,
    );
    assert.throws(() => loadConfig({ flags: { topic: 'bad topic' } }), /may contain only/);
    assert.throws(
      () => loadConfig({ flags: { retryBackoffInitialMs: '10m', retryBackoffMaxMs: '1m' } }),
      /must not exceed --retry-backoff-max/,
    );
  });

  it('maps every option to WALBOX_<FLAG_IN_UPPER_SNAKE>', () => {
    assert.equal(toEnvName('topic-replication-factor'), 'WALBOX_TOPIC_REPLICATION_FACTOR');
    for (const spec of OPTION_SPECS) assert.match(toEnvName(spec.flag), /^WALBOX_[A-Z_]+$/);
  });
});
