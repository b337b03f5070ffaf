import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { redactSecretsInText } from '../../../src/observability/redactSecretsInText.js';

describe('redactSecretsInText', () => {
  it('hides the password of a URL, keeping user, host, port, database and other parameters', () => {
    assert.equal(redactSecretsInText('postgres://u:hunter2@h/db'), 'postgres://u:***@h/db');
    assert.equal(
      redactSecretsInText('connect to postgresql://app:pw@db.internal:5432/orders?sslmode=require failed'),
      'connect to postgresql://app:***@db.internal:5432/orders?sslmode=require failed',
    );
    assert.equal(redactSecretsInText('postgres://:pw@h'), 'postgres://:***@h');
  });

  it('hides an unencoded @ or / in a password too', () => {
    assert.equal(redactSecretsInText('postgres://u:p@ss@h/db'), 'postgres://u:***@h/db');
    assert.equal(redactSecretsInText('postgres://u:pa/ss@h/db'), 'postgres://u:***@h/db');
  });

  it('hides secret-named parameters in URLs, keyword strings and environment-style text', () => {
    assert.equal(
      redactSecretsInText('postgres://u@h/db?sslmode=verify-full&password=x&sslpassword=y&sslkey=/k.pem'),
      'postgres://u@h/db?sslmode=verify-full&password=***&sslpassword=***&sslkey=***',
    );
    assert.equal(
      redactSecretsInText("host=h port=5432 password='a b' user=u"),
      'host=h port=5432 password=*** user=u',
    );
    assert.equal(redactSecretsInText('PGPASSWORD=abc psql'), 'PGPASSWORD=*** psql');
    assert.equal(
      redactSecretsInText('https://h/p?a=1&access_token=zz&b=2'),
      'https://h/p?a=1&access_token=***&b=2',
    );
  });

  it('leaves text without credentials alone', () => {
    for (const text of [
      'postgres://u@h/db',
      'postgres://h:5432/db',
      'mail me@example.com',
      'kafka:9092, user=u, mechanism=scram-sha-512',
      'topic=orders key=o-1',
    ]) {
      assert.equal(redactSecretsInText(text), text);
    }
  });
});
