import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { describeStartupRefusal } from '../../../../src/sink/kafka/describeStartupRefusal.js';
import { toKafkaSecurity } from '../../../../src/sink/kafka/kafkaSecurity.js';
import { ConfigError } from '../../../../src/errors.js';

/** kafkajs rewraps errors keeping only the message: the shapes below are the ones it produced in our runs. */
function wrapped(message: string, code?: string): Error {
  const inner = Object.assign(new Error(message), code === undefined ? {} : { code });
  return Object.assign(new Error('No brokers available'), {
    name: 'KafkaJSNumberOfRetriesExceeded',
    cause: inner,
  });
}

describe('describeStartupRefusal', () => {
  const brokers = ['k1:9093'];

  it('turns refused logins, disabled mechanisms and untrusted certificates into ConfigErrors with the fix', () => {
    const cases: [Error, RegExp][] = [
      [
        wrapped(
          'SASL SCRAM SHA512 authentication failed: Authentication failed during authentication due to invalid credentials',
        ),
        /refused the SASL login/,
      ],
      [
        wrapped('The broker does not support the requested SASL mechanism'),
        /does not enable this SASL mechanism/,
      ],
      [wrapped('SASL PLAIN mechanism is not supported by the server'), /does not enable this SASL mechanism/],
      [
        wrapped(
          'Connection error: self-signed certificate in certificate chain',
          'SELF_SIGNED_CERT_IN_CHAIN',
        ),
        /certificate is not trusted.*--kafka-ssl-ca-file/,
      ],
      [
        wrapped(
          "Connection error: Hostname/IP does not match certificate's altnames: IP: 127.0.0.1 is not in the cert's list",
        ),
        /does not name the host/,
      ],
      [wrapped('Connection error: ssl3_get_record:wrong version number'), /does not speak TLS on this port/],
    ];
    for (const [error, pattern] of cases) {
      const refusal = describeStartupRefusal(error, brokers);
      assert.ok(refusal instanceof ConfigError, error.message);
      assert.match(refusal.message, /^Kafka at k1:9093/);
      assert.match(refusal.message, pattern);
    }
  });

  it('leaves outages to the retry loop', () => {
    assert.equal(
      describeStartupRefusal(
        wrapped('Connection error: connect ECONNREFUSED 127.0.0.1:9092', 'ECONNREFUSED'),
        brokers,
      ),
      undefined,
    );
    assert.equal(describeStartupRefusal(new Error('Connection timeout'), brokers), undefined);
  });
});

describe('toKafkaSecurity', () => {
  const none = {
    kafkaSsl: false,
    kafkaSslCaFile: undefined,
    kafkaSslCertFile: undefined,
    kafkaSslKeyFile: undefined,
    kafkaSslInsecure: false,
    kafkaSaslMechanism: undefined,
    kafkaSaslUsername: undefined,
    kafkaSaslPassword: undefined,
    kafkaSaslOauthbearerTokenFile: undefined,
  } as const;

  it('passes nothing when nothing is configured', () => {
    assert.deepEqual(toKafkaSecurity(none), { ssl: undefined, sasl: undefined });
  });

  it('verifies certificates unless told not to', () => {
    assert.equal(toKafkaSecurity({ ...none, kafkaSsl: true }).ssl?.rejectUnauthorized, true);
    const insecure = toKafkaSecurity({ ...none, kafkaSsl: true, kafkaSslInsecure: true }).ssl;
    assert.equal(insecure?.rejectUnauthorized, false);
  });

  it('builds SCRAM credentials and names an unreadable CA file by its flag', () => {
    const security = toKafkaSecurity({
      ...none,
      kafkaSaslMechanism: 'scram-sha-512',
      kafkaSaslUsername: 'u',
      kafkaSaslPassword: 'p',
    });
    assert.deepEqual(security.sasl, { mechanism: 'scram-sha-512', username: 'u', password: 'p' });
    assert.throws(
      () => toKafkaSecurity({ ...none, kafkaSsl: true, kafkaSslCaFile: '/nonexistent/ca.pem' }),
      (error: unknown) =>
        error instanceof ConfigError && /--kafka-ssl-ca-file \/nonexistent\/ca\.pem/.test(error.message),
    );
  });
});
