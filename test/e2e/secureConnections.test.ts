import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

import { Kafka, logLevel } from 'kafkajs';
import pg from 'pg';

import { enqueue } from '../../src/outbox/enqueue.js';
import { startRelayProcess } from '../support/relayProcess.js';
import { runCli, type CliResult } from '../support/runCli.js';
import {
  readBrokerLog,
  readSaslUsers,
  requireSecureStack,
  setScramPassword,
  startTlsPostgres,
  type SecureStack,
} from '../support/stackControl.js';
import { requireKafkaBrokers, uniqueName, findFreePort } from '../support/testEnv.js';
import { TopicReader } from '../support/topicReader.js';
import { waitFor } from '../support/waitFor.js';

/**
 * Secure connections on real parts: the broker's SASL_SSL listener (test CA, SCRAM-SHA-512, PLAIN,
 * OAUTHBEARER) and a PostgreSQL with ssl=on that rejects every TCP connection without TLS.
 */
describe('secure connections', () => {
  let secure: SecureStack;
  let users: Awaited<ReturnType<typeof readSaslUsers>>;
  let postgres: Awaited<ReturnType<typeof startTlsPostgres>>;
  let dir: string;
  const schema = uniqueName('tls');
  const slot = uniqueName('slot');
  const publication = uniqueName('pub');
  const topic = uniqueName('tls_topic');
  let admin: ReturnType<Kafka['admin']>;
  const cleanUps: (() => Promise<unknown>)[] = [];

  /** postgres://… to the TLS-only cluster; `query` is added to the URL as is. */
  function databaseUrl(query: string, host = 'localhost', password = postgres.password): string {
    return `postgres://postgres:${password}@${host}:${String(postgres.port)}/walbox?${query}`;
  }
  const verifyFull = (): string => databaseUrl(`sslmode=verify-full&sslrootcert=${secure.caFile}`);

  /** What a Kubernetes Secret gives: environment variables and files, nothing on the command line. */
  function secretEnv(extra: Record<string, string> = {}): Record<string, string> {
    const urlFile = join(dir, 'database-url');
    writeFileSync(urlFile, verifyFull());
    const passwordFile = join(dir, 'kafka-password');
    writeFileSync(passwordFile, `${users.scram.password}\n`);
    return {
      WALBOX_DATABASE_URL_FILE: urlFile,
      WALBOX_KAFKA_BROKERS: secure.brokers,
      WALBOX_KAFKA_SSL_CA_FILE: secure.caFile,
      WALBOX_KAFKA_SASL_MECHANISM: 'scram-sha-512',
      WALBOX_KAFKA_SASL_USERNAME: users.scram.username,
      WALBOX_KAFKA_SASL_PASSWORD_FILE: passwordFile,
      WALBOX_SCHEMA: schema,
      WALBOX_SLOT: slot,
      WALBOX_PUBLICATION: publication,
      WALBOX_TOPIC: topic,
      WALBOX_METRICS_PORT: '0',
      WALBOX_LOG_LEVEL: 'trace',
      ...extra,
    };
  }

  async function withTlsClient<T>(body: (client: pg.Client) => Promise<T>): Promise<T> {
    const client = new pg.Client({
      connectionString: databaseUrl(''),
      ssl: { ca: readFileSync(secure.caFile, 'utf8') },
    });
    await client.connect();
    try {
      return await body(client);
    } finally {
      await client.end();
    }
  }

  async function writeEvents(count: number, prefix: string): Promise<string[]> {
    return withTlsClient(async (client) => {
      const ids: string[] = [];
      await client.query('BEGIN');
      for (let i = 0; i < count; i++) {
        const { id } = await enqueue(
          client,
          {
            aggregateType: 'order',
            aggregateId: `${prefix}-${String(i % 5)}`,
            eventType: 'created',
            payload: { i },
          },
          { schema },
        );
        ids.push(id);
      }
      await client.query('COMMIT');
      return ids;
    });
  }

  /** No secret of this suite in any output. */
  function assertNoSecret(...outputs: string[]): void {
    for (const secret of [users.scram.password, users.plain.password, postgres.password, 'wrong-secret-x']) {
      for (const output of outputs) assert.ok(!output.includes(secret), `a secret appears in:\n${output}`);
    }
  }

  /** A startup refusal: exit 2 within the (generous) timeout, one line on stderr naming the service and fix. */
  function assertRefusal(result: CliResult, pattern: RegExp): void {
    const lines = result.stderr.trim().split('\n');
    assert.equal(result.code, 2, `exit code; stderr:\n${result.stderr}`);
    assert.equal(lines.length, 1, `one line on stderr, got:\n${result.stderr}`);
    assert.match(lines[0] ?? '', pattern);
    assertNoSecret(result.stdout, result.stderr);
    console.log(`  ${(result.durationMs / 1000).toFixed(1)} s: ${lines[0] ?? ''}`);
  }

  before(async () => {
    secure = requireSecureStack();
    users = await readSaslUsers();
    postgres = await startTlsPostgres();
    cleanUps.push(() => postgres.stop());
    dir = mkdtempSync(join(tmpdir(), 'walbox-tls-'));
    cleanUps.push(() => {
      rmSync(dir, { recursive: true, force: true });
      return Promise.resolve();
    });
    const kafka = new Kafka({ brokers: requireKafkaBrokers(), logLevel: logLevel.NOTHING });
    admin = kafka.admin();
    await admin.connect();
    cleanUps.push(() => admin.disconnect());
    await admin.createTopics({ topics: [{ topic, numPartitions: 3 }], waitForLeaders: true });
    cleanUps.push(() => admin.deleteTopics({ topics: [topic] }));
    const migrated = await runCli(['migrate'], { env: secretEnv() });
    assert.equal(migrated.code, 0, migrated.stderr);
  });

  after(async () => {
    // What before() got to start, in reverse.
    for (const cleanUp of cleanUps.reverse()) await cleanUp().catch(() => undefined);
  });

  it('delivers over SASL_SSL (SCRAM-SHA-512) and PostgreSQL verify-full, configured by env and *_FILE only', async () => {
    const ids = await writeEvents(50, 'a');
    const reader = await TopicReader.start([topic]);
    const started = Date.now();
    const relay = startRelayProcess([], secretEnv());
    try {
      await waitFor(() => reader.messages.length > 0, { timeoutMs: 60_000, what: 'the first delivery' });
      console.log(`  first delivery over TLS ${String(Date.now() - started)} ms after the relay started`);
      await reader.waitForIds(ids);
      // Those were caught up from the table while the slot was created; what is committed once the relay
      // streams travels the replication connection, which runs over TLS too (the server rejects it otherwise).
      await relay.waitForLine(/streaming from the replication slot/);
      const streamed = await writeEvents(10, 'b');
      await reader.waitForIds([...ids, ...streamed]);
      const walsender = await withTlsClient(async (client) => {
        const { rows } = await client.query<{ ssl: boolean }>(
          `SELECT s.ssl FROM pg_replication_slots r JOIN pg_stat_ssl s ON s.pid = r.active_pid WHERE r.slot_name = $1`,
          [slot],
        );
        return rows;
      });
      assert.deepEqual(walsender, [{ ssl: true }], 'the walsender streaming the slot uses TLS');
      assert.ok(
        relay.lines.some(
          (l) => /connected to PostgreSQL/.test(l) && /certificate verified.*host name checked/.test(l),
        ),
        `the relay logs the TLS in effect:\n${relay.lines.slice(0, 10).join('\n')}`,
      );
      const status = await runCli(['status'], { env: secretEnv() });
      assert.equal(status.code, 0, status.stdout + status.stderr);
      const stopped = await relay.stop();
      assert.equal(stopped.code, 0, relay.lines.slice(-10).join('\n'));
      assertNoSecret(relay.lines.join('\n'), status.stdout, status.stderr);
    } finally {
      await relay.stop('SIGKILL');
      await reader.stop();
    }
  });

  it('doctor says which TLS and SASL settings are in effect for each connection', async () => {
    const result = await runCli(['doctor'], { env: secretEnv() });
    assert.equal(result.code, 0, result.stdout + result.stderr);
    assert.match(
      result.stdout,
      /PASS {2}postgres tls: TLSv1\.[23], certificate verified against .*ca\.crt, host name checked \(sslmode=verify-full\)/,
    );
    assert.match(
      result.stdout,
      /PASS {2}kafka: .*TLS verified against .*ca\.crt, host name checked; SASL SCRAM-SHA-512 as walbox/,
    );
    const require = await runCli(['doctor'], {
      env: secretEnv({ WALBOX_DATABASE_URL: databaseUrl('sslmode=require'), WALBOX_DATABASE_URL_FILE: '' }),
    });
    assert.match(
      require.stdout,
      /postgres tls: TLSv1\.[23], certificate NOT verified .*WARNING: .*verify-full/,
    );
    assertNoSecret(result.stdout, result.stderr, require.stdout, require.stderr);
  });

  it('PLAIN over TLS and OAUTHBEARER with a token file reach the broker', async () => {
    const passwordFile = join(dir, 'plain-password');
    writeFileSync(passwordFile, users.plain.password);
    const plain = await runCli(['doctor'], {
      env: secretEnv({
        WALBOX_KAFKA_SASL_MECHANISM: 'plain',
        WALBOX_KAFKA_SASL_USERNAME: users.plain.username,
        WALBOX_KAFKA_SASL_PASSWORD_FILE: passwordFile,
      }),
    });
    assert.match(plain.stdout, /PASS {2}kafka: .*SASL PLAIN as walboxplain/, plain.stdout + plain.stderr);
    const tokenFile = join(dir, 'token');
    writeFileSync(tokenFile, unsecuredToken('walbox'));
    const oauth = await runCli(['doctor'], {
      env: secretEnv({
        WALBOX_KAFKA_SASL_MECHANISM: 'oauthbearer',
        WALBOX_KAFKA_SASL_USERNAME: '',
        WALBOX_KAFKA_SASL_PASSWORD_FILE: '',
        WALBOX_KAFKA_SASL_OAUTHBEARER_TOKEN_FILE: tokenFile,
      }),
    });
    assert.match(oauth.stdout, /PASS {2}kafka: .*SASL OAUTHBEARER, token from/, oauth.stdout + oauth.stderr);
  });

  it('OAUTHBEARER reads its token file again at every re-authentication', async () => {
    const tokenFile = join(dir, 'rotating-token');
    const rotatedSubject = uniqueName('rotated');
    writeFileSync(tokenFile, unsecuredToken('walbox'));
    const reader = await TopicReader.start([topic]);
    const relay = startRelayProcess(
      [],
      secretEnv({
        WALBOX_KAFKA_SASL_MECHANISM: 'oauthbearer',
        WALBOX_KAFKA_SASL_USERNAME: '',
        WALBOX_KAFKA_SASL_PASSWORD_FILE: '',
        WALBOX_KAFKA_SASL_OAUTHBEARER_TOKEN_FILE: tokenFile,
        WALBOX_LOG_LEVEL: 'info',
      }),
    );
    try {
      const first = await writeEvents(3, 'o1');
      await reader.waitForIds(first);
      // A projected token is replaced in place; the broker asks for re-authentication every 30 s.
      writeFileSync(tokenFile, unsecuredToken(rotatedSubject));
      await waitFor(() => readBrokerLog().includes(`principal ${rotatedSubject}`), {
        timeoutMs: 90_000,
        what: 'the broker validating the rotated token',
      });
      const second = await writeEvents(3, 'o2');
      await reader.waitForIds([...first, ...second]);
      assert.equal(relay.child.exitCode, null);
    } finally {
      await relay.stop('SIGKILL');
      await reader.stop();
    }
  });

  describe('a refused start is one line naming the service and the fix, exit 2, no retry loop, no secret', () => {
    const run = (env: Record<string, string>): Promise<CliResult> =>
      runCli(['run'], { env: secretEnv(env), timeoutMs: 50_000 });

    it('Kafka: wrong SASL password', async () => {
      const file = join(dir, 'wrong-password');
      writeFileSync(file, 'wrong-secret-x');
      assertRefusal(
        await run({ WALBOX_KAFKA_SASL_PASSWORD_FILE: file }),
        /^walbox run: Kafka at .* refused the SASL login .*check --kafka-sasl-username/,
      );
    });

    it('Kafka: SASL mechanism not enabled on the listener', async () => {
      assertRefusal(
        await run({ WALBOX_KAFKA_SASL_MECHANISM: 'scram-sha-256' }),
        /^walbox run: Kafka at .* does not enable this SASL mechanism .*sasl\.enabled\.mechanisms/,
      );
    });

    it('Kafka: certificate from an untrusted CA', async () => {
      assertRefusal(
        await run({ WALBOX_KAFKA_SSL_CA_FILE: secure.otherCaFile }),
        /^walbox run: Kafka at .*: the broker's certificate is not trusted .*set --kafka-ssl-ca-file/,
      );
    });

    it('Kafka: host name not in the certificate', async () => {
      assertRefusal(
        await run({ WALBOX_KAFKA_BROKERS: `127.0.0.1:${String(secure.port)}` }),
        /^walbox run: Kafka at 127\.0\.0\.1:\d+: the broker's certificate does not name the host/,
      );
    });

    it('Kafka: --kafka-sasl-password on the command line is refused without echoing it', async () => {
      const result = await runCli(['run', '--kafka-sasl-password', 'wrong-secret-x'], { env: secretEnv() });
      assertRefusal(
        result,
        /^walbox run: --kafka-sasl-password is not accepted on the command line.*WALBOX_KAFKA_SASL_PASSWORD_FILE/,
      );
    });

    it('PostgreSQL: wrong password', async () => {
      assertRefusal(
        await run({
          WALBOX_DATABASE_URL_FILE: '',
          WALBOX_DATABASE_URL: databaseUrl(
            `sslmode=verify-full&sslrootcert=${secure.caFile}`,
            'localhost',
            'wrong-secret-x',
          ),
        }),
        /^walbox run: PostgreSQL at localhost:\d+\/walbox refused the login .*fix the user or password/,
      );
    });

    it('PostgreSQL: certificate from an untrusted CA', async () => {
      assertRefusal(
        await run({
          WALBOX_DATABASE_URL_FILE: '',
          WALBOX_DATABASE_URL: databaseUrl(`sslmode=verify-full&sslrootcert=${secure.otherCaFile}`),
        }),
        /^walbox run: PostgreSQL at .*: the server certificate is not trusted .*set sslrootcert/,
      );
    });

    it('PostgreSQL: host name not in the certificate (verify-full), while verify-ca accepts it', async () => {
      assertRefusal(
        await run({
          WALBOX_DATABASE_URL_FILE: '',
          WALBOX_DATABASE_URL: databaseUrl(`sslmode=verify-full&sslrootcert=${secure.caFile}`, '127.0.0.1'),
        }),
        /^walbox run: PostgreSQL at 127\.0\.0\.1:\d+\/walbox: the server certificate is not trusted .*host name/,
      );
      const status = await runCli(['status'], {
        env: secretEnv({
          WALBOX_DATABASE_URL_FILE: '',
          WALBOX_DATABASE_URL: databaseUrl(`sslmode=verify-ca&sslrootcert=${secure.caFile}`, '127.0.0.1'),
        }),
      });
      // Connected and reported (exit 3 = unhealthy: no relay holds the slot now), not refused (exit 2).
      assert.ok(status.code === 0 || status.code === 3, status.stderr);
      assert.match(status.stdout, /slot +\S+: /);
    });

    it('PostgreSQL: a TLS-only server and sslmode=disable', async () => {
      assertRefusal(
        await run({ WALBOX_DATABASE_URL_FILE: '', WALBOX_DATABASE_URL: databaseUrl('sslmode=disable') }),
        /^walbox run: PostgreSQL at .* accepts this login only over TLS .*sslmode=verify-full/,
      );
    });

    it('PostgreSQL: an unreadable sslrootcert is a configuration error naming the parameter', async () => {
      assertRefusal(
        await run({
          WALBOX_DATABASE_URL_FILE: '',
          WALBOX_DATABASE_URL: databaseUrl('sslmode=verify-full&sslrootcert=/nonexistent/ca.crt'),
        }),
        /^walbox run: cannot read sslrootcert \/nonexistent\/ca\.crt \(--database-url\): no such file/,
      );
    });
  });

  it('a PostgreSQL password rotated under a running relay is retried visibly, then delivery resumes', async () => {
    // One admin session stays open across the rotation: new logins fail meanwhile, this one does not.
    const adminClient = new pg.Client({
      connectionString: databaseUrl(''),
      ssl: { ca: readFileSync(secure.caFile, 'utf8') },
    });
    await adminClient.connect();
    const reader = await TopicReader.start([topic]);
    const relay = startRelayProcess([], secretEnv({ WALBOX_LOG_LEVEL: 'info' }));
    try {
      const first = await writeEvents(3, 'p1');
      await reader.waitForIds(first);
      await adminClient.query(`ALTER ROLE postgres PASSWORD 'rotated-secret-x'`);
      await adminClient.query(
        `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name LIKE 'walbox%' AND pid <> pg_backend_pid()`,
      );
      await relay.waitForLine(/"level":"warn".*password authentication failed/, 60_000);
      assert.equal(relay.child.exitCode, null, 'the relay keeps running while the login is refused');
      await adminClient.query(`ALTER ROLE postgres PASSWORD '${postgres.password}'`);
      const second = await writeEvents(3, 'p2');
      await reader.waitForIds([...first, ...second]);
      assert.ok(!relay.lines.join('\n').includes('rotated-secret-x'));
    } finally {
      await adminClient.query(`ALTER ROLE postgres PASSWORD '${postgres.password}'`).catch(() => undefined);
      await adminClient.end();
      await relay.stop('SIGKILL');
      await reader.stop();
    }
  });

  it('credentials rotated after startup are retried visibly, with /readyz failing, until they work again', async () => {
    const metricsPort = await findFreePort();
    const reader = await TopicReader.start([topic]);
    const relay = startRelayProcess(
      [],
      secretEnv({ WALBOX_METRICS_PORT: String(metricsPort), WALBOX_LOG_LEVEL: 'info' }),
    );
    const rotated = 'rotated-secret-x';
    try {
      const first = await writeEvents(5, 'r1');
      await reader.waitForIds(first);
      await waitFor(async () => (await readyStatus(metricsPort)) === 200, {
        timeoutMs: 30_000,
        what: '/readyz 200',
      });
      // The broker's password changes under the relay; its connections re-authenticate within 30 s
      // (connections.max.reauth.ms of the SASL_SSL listener) and then fail.
      await setScramPassword(users.scram.username, rotated);
      const second = await writeEvents(5, 'r2');
      await relay.waitForLine(/"level":"warn".*(retry|failed)/i, 90_000);
      await waitFor(async () => (await readyStatus(metricsPort)) === 503, {
        timeoutMs: 60_000,
        what: '/readyz 503 while the broker refuses the login',
      });
      assert.equal(relay.child.exitCode, null, 'the relay keeps running');
      await setScramPassword(users.scram.username, users.scram.password);
      await reader.waitForIds([...first, ...second]);
      await waitFor(async () => (await readyStatus(metricsPort)) === 200, {
        timeoutMs: 60_000,
        what: '/readyz 200 again',
      });
      assertNoSecret(relay.lines.join('\n'));
      assert.ok(!relay.lines.join('\n').includes(rotated));
    } finally {
      await setScramPassword(users.scram.username, users.scram.password).catch(() => undefined);
      await relay.stop('SIGKILL');
      await reader.stop();
    }
  });
});

/** An unsigned JWT, which the broker's default (test-only) OAUTHBEARER validator accepts. */
function unsecuredToken(subject: string): string {
  const part = (value: object): string => Buffer.from(JSON.stringify(value)).toString('base64url');
  const now = Math.floor(Date.now() / 1000);
  return `${part({ alg: 'none' })}.${part({ sub: subject, iat: now, exp: now + 3600 })}.`;
}

async function readyStatus(port: number): Promise<number> {
  try {
    return (await fetch(`http://127.0.0.1:${String(port)}/readyz`)).status;
  } catch {
    return 0;
  }
}
