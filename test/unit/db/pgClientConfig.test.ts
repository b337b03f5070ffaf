import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';

import { toPgClientConfig } from '../../../src/db/pgClientConfig.js';
import { ConfigError } from '../../../src/errors.js';

const dir = mkdtempSync(join(tmpdir(), 'walbox-pgtls-'));
const ca = join(dir, 'ca.crt');
writeFileSync(ca, 'CA PEM');

describe('toPgClientConfig: libpq sslmode meanings for node-postgres', () => {
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('takes every TLS parameter out of the URL, so node-postgres cannot read them its own way', () => {
    const config = toPgClientConfig(
      `postgres://u:p@db:5433/app?sslmode=verify-full&sslrootcert=${ca}&application_name=x`,
    );
    const url = new URL(config.connectionString ?? '');
    assert.equal(url.searchParams.has('sslmode'), false);
    assert.equal(url.searchParams.has('sslrootcert'), false);
    assert.equal(url.searchParams.get('application_name'), 'x');
    assert.equal(url.password, 'p');
  });

  it('disable: no TLS', () => {
    assert.equal(toPgClientConfig('postgres://u@db/app?sslmode=disable').ssl, false);
  });

  it('prefer (also the default) and require: encrypted, certificate not verified', () => {
    assert.deepEqual(toPgClientConfig('postgres://u@db1/app').ssl, { rejectUnauthorized: false });
    assert.deepEqual(toPgClientConfig('postgres://u@db1/app?sslmode=require').ssl, {
      rejectUnauthorized: false,
    });
  });

  it('require with a root certificate verifies it, as libpq does (verify-ca)', () => {
    const ssl = toPgClientConfig(`postgres://u@db/app?sslmode=require&sslrootcert=${ca}`).ssl;
    assert.ok(typeof ssl === 'object');
    assert.equal(ssl.rejectUnauthorized, true);
    assert.equal(ssl.ca, 'CA PEM');
    assert.equal(typeof ssl.checkServerIdentity, 'function', 'host name not checked');
  });

  it('verify-full: the CA and the host name are checked', () => {
    const ssl = toPgClientConfig(`postgres://u@db/app?sslmode=verify-full&sslrootcert=${ca}`).ssl;
    assert.ok(typeof ssl === 'object');
    assert.equal(ssl.rejectUnauthorized, true);
    assert.equal(ssl.ca, 'CA PEM');
    assert.equal(ssl.checkServerIdentity, undefined, "Node's own host-name check");
  });

  it('sslrootcert=system uses the system store', () => {
    const ssl = toPgClientConfig('postgres://u@db/app?sslmode=verify-full&sslrootcert=system').ssl;
    assert.ok(typeof ssl === 'object');
    assert.equal(ssl.ca, undefined);
    assert.equal(ssl.rejectUnauthorized, true);
  });

  it('a TLS file that vanished is a configuration error naming the parameter', () => {
    assert.throws(
      () => toPgClientConfig('postgres://u@db/app?sslmode=verify-full&sslrootcert=/nonexistent/ca.crt'),
      (error: unknown) =>
        error instanceof ConfigError && /cannot read sslrootcert \/nonexistent\/ca\.crt/.test(error.message),
    );
  });
});
