import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { loadConfig } from '../../../src/config/loadConfig.js';
import { ConfigError } from '../../../src/errors.js';

/** Every path exists except the ones under /missing/. */
const checkFile = (path: string): string | undefined =>
  path.startsWith('/missing/') ? 'no such file' : undefined;

function load(env: Record<string, string>): ReturnType<typeof loadConfig> {
  return loadConfig({ env, checkFile, readFile: () => 'from-file\n' });
}

function problemOf(env: Record<string, string>): string {
  try {
    load(env);
  } catch (error) {
    assert.ok(error instanceof ConfigError, String(error));
    return error.message;
  }
  assert.fail('expected a ConfigError');
}

describe('secure connection settings', () => {
  it('reads Kafka TLS and SASL from the environment, the password from its _FILE', () => {
    const config = load({
      WALBOX_KAFKA_SSL_CA_FILE: '/etc/ca.pem',
      WALBOX_KAFKA_SASL_MECHANISM: 'scram-sha-512',
      WALBOX_KAFKA_SASL_USERNAME: 'walbox',
      WALBOX_KAFKA_SASL_PASSWORD_FILE: '/run/secrets/kafka',
    });
    assert.equal(config.kafkaSsl, true, 'a CA file implies TLS');
    assert.equal(config.kafkaSslCaFile, '/etc/ca.pem');
    assert.equal(config.kafkaSaslMechanism, 'scram-sha-512');
    assert.equal(config.kafkaSaslPassword, 'from-file');
  });

  it('keeps TLS off unless asked, and --kafka-ssl-insecure implies it', () => {
    assert.equal(load({}).kafkaSsl, false);
    assert.equal(load({ WALBOX_KAFKA_SSL_INSECURE: 'true' }).kafkaSsl, true);
  });

  it('names an unreadable TLS file by its flag', () => {
    assert.match(
      problemOf({ WALBOX_KAFKA_SSL_CA_FILE: '/missing/ca.pem' }),
      /cannot read --kafka-ssl-ca-file \/missing\/ca\.pem: no such file/,
    );
  });

  it('refuses incomplete or mismatched SASL settings', () => {
    assert.match(problemOf({ WALBOX_KAFKA_SASL_USERNAME: 'u' }), /--kafka-sasl-mechanism is not/);
    assert.match(
      problemOf({ WALBOX_KAFKA_SASL_MECHANISM: 'plain', WALBOX_KAFKA_SASL_USERNAME: 'u' }),
      /needs --kafka-sasl-username and WALBOX_KAFKA_SASL_PASSWORD/,
    );
    assert.match(
      problemOf({ WALBOX_KAFKA_SASL_MECHANISM: 'oauthbearer' }),
      /needs --kafka-sasl-oauthbearer-token-file/,
    );
    assert.match(problemOf({ WALBOX_KAFKA_SSL_CERT_FILE: '/etc/c.pem' }), /go together/);
  });

  it('never shows the SASL password in an error', () => {
    const message = problemOf({ WALBOX_KAFKA_SASL_PASSWORD: 'hunter2' });
    assert.ok(!message.includes('hunter2'), message);
  });

  it('validates the port and sslmode that node-postgres would take silently', () => {
    assert.match(problemOf({ DATABASE_URL: 'postgres://u:pw@h/db?port=abc' }), /invalid port="abc"/);
    assert.match(problemOf({ DATABASE_URL: 'postgres://u:pw@h/db?port=65536' }), /invalid port="65536"/);
    assert.match(problemOf({ DATABASE_URL: 'postgres://u:pw@h/db', PGPORT: 'abc' }), /invalid PGPORT "abc"/);
    assert.match(
      problemOf({ DATABASE_URL: 'postgres://u:pw@h/db?sslmode=no-verify' }),
      /invalid sslmode="no-verify"/,
    );
    assert.match(problemOf({ DATABASE_URL: 'postgres://u:pw@h/db?ssl=true' }), /libpq does not know/);
    assert.ok(!problemOf({ DATABASE_URL: 'postgres://u:pw@h/db?port=abc' }).includes('pw@'));
  });

  it('folds PGSSLMODE and PGSSLROOTCERT into the URL, the URL winning', () => {
    const config = load({
      DATABASE_URL: 'postgres://u@h/db',
      PGSSLMODE: 'verify-full',
      PGSSLROOTCERT: '/etc/root.crt',
    });
    const url = new URL(config.databaseUrl ?? '');
    assert.equal(url.searchParams.get('sslmode'), 'verify-full');
    assert.equal(url.searchParams.get('sslrootcert'), '/etc/root.crt');
    const own = load({ DATABASE_URL: 'postgres://u@h/db?sslmode=require', PGSSLMODE: 'disable' });
    assert.equal(
      own.databaseUrl,
      'postgres://u@h/db?sslmode=require',
      'an untouched URL stays byte for byte',
    );
  });

  it('asks verify-ca/verify-full for a root certificate, and names unreadable TLS files in the URL', () => {
    assert.match(
      problemOf({ DATABASE_URL: 'postgres://u@h/db?sslmode=verify-full', HOME: '/missing/home' }),
      /sslmode=verify-full needs sslrootcert/,
    );
    assert.match(
      problemOf({ DATABASE_URL: 'postgres://u@h/db?sslmode=verify-full&sslrootcert=/missing/ca' }),
      /cannot read sslrootcert \/missing\/ca \(--database-url\): no such file/,
    );
    assert.match(
      problemOf({ DATABASE_URL: 'postgres://u@h/db?sslmode=verify-full&sslrootcert=system&sslcert=/c' }),
      /only one of sslcert and sslkey/,
    );
  });
});
