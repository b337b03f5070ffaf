import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { runCli } from '../support/runCli.js';
import { requireDatabaseUrl, findFreePort } from '../support/testEnv.js';

describe('walbox CLI', () => {
  it('prints help with the commands and exit codes', async () => {
    const result = await runCli(['--help']);
    assert.equal(result.code, 0);
    for (const command of [
      'run',
      'migrate',
      'status',
      'doctor',
      'slot <action>',
      'dlq <action> [ids..]',
      'replay [ids..]',
      'cleanup',
    ]) {
      assert.ok(result.stdout.includes(`walbox ${command}`), `--help lacks walbox ${command}`);
    }
    assert.match(
      result.stdout,
      /Exit codes: 0 success, 1 runtime failure, 2 usage or configuration error, 3 failed precondition/,
    );
    const migrateHelp = await runCli(['migrate', '--help']);
    assert.match(migrateHelp.stdout, /--database-url[\s\S]*\[env\s+WALBOX_DATABASE_URL,\s+DATABASE_URL\]/);
    assert.match(migrateHelp.stdout, /--table[\s\S]*\[default outbox_events\]/);
  });

  it('exits 2 with one line on an unknown flag', async () => {
    const result = await runCli(['migrate', '--tabel', 'x']);
    assert.equal(result.code, 2);
    assert.equal(result.stderr.trim().split('\n').length, 1);
    assert.match(result.stderr, /Unknown argument: --tabel \(see walbox --help\)$/m);
  });

  it('exits 2 without a command or with an unknown one', async () => {
    const none = await runCli([]);
    assert.equal(none.code, 2);
    assert.equal(none.stderr, 'walbox: name a command (see walbox --help)\n');
    assert.equal((await runCli(['frobnicate'])).code, 2);
  });

  it('reports every bad value in one line of one style, naming it once (exit 2)', async () => {
    const url = 'postgres://u@127.0.0.1:1/db';
    for (const [args, expected] of [
      [
        ['run', '--database-url', url, '--create-topics=maybe'],
        /^walbox: invalid --create-topics "maybe": must be true or false/,
      ],
      [
        ['status', '--json=perhaps', '--database-url', url],
        /^walbox: invalid --json "perhaps": must be true or false/,
      ],
      [
        ['run', '--mode=foo', '--database-url', url, '--kafka-brokers', 'k:9092'],
        /^walbox run: invalid --mode "foo": must be one of wal, poll$/,
      ],
      [
        ['run', '--database-url', url, '--kafka-brokers', 'k:9092', '--startup-timeout', '-1s'],
        /^walbox run: invalid --startup-timeout "-1s": must not be negative/,
      ],
      [
        ['dlq', 'frob', '--database-url', url],
        /^walbox: invalid action "frob": must be one of list, retry, purge, skip/,
      ],
      [
        ['run', '--database-url', 'notaurl', '--kafka-brokers', 'k:9092'],
        /^walbox run: invalid --database-url: is not a URL/,
      ],
      [
        ['status', '--log-format=xml', '--database-url', url],
        /^walbox: Unknown argument: --log-format \(see walbox --help\)$/,
      ],
    ] as const) {
      const result = await runCli(args);
      assert.equal(result.code, 2, `${args.join(' ')}: ${result.stderr}`);
      assert.equal(result.stderr.trim().split('\n').length, 1, result.stderr);
      assert.match(result.stderr.trim(), expected);
      assert.doesNotMatch(result.stderr, /missing --database-url/, 'an invalid value is not also missing');
    }
  });

  it('exits 2 on a malformed --database-url, without echoing it', async () => {
    const result = await runCli(['migrate', '--database-url', 'postgres//user:hunter2@nowhere']);
    assert.equal(result.code, 2);
    assert.equal(result.stderr.trim().split('\n').length, 1);
    assert.match(result.stderr, /invalid --database-url: is not a URL/);
    assert.doesNotMatch(result.stderr + result.stdout, /hunter2/);
  });

  it('never exits 0 silently on a port node-postgres cannot use (URL parameter or PGPORT)', async () => {
    const url = new URL(requireDatabaseUrl());
    for (const [args, env] of [
      [['status', '--database-url', `${url.toString()}?port=abc`], {}],
      [['status', '--database-url', `${url.toString()}?port=65536`], {}],
      [
        ['status', '--database-url', `postgres://${url.username}:${url.password}@${url.hostname}/walbox`],
        { PGPORT: 'abc' },
      ],
    ] as const) {
      const result = await runCli(args, { env });
      assert.equal(result.code, 2, `${args.join(' ')}: ${result.stderr}`);
      assert.equal(result.stderr.trim().split('\n').length, 1);
      assert.match(result.stderr, /invalid (port=|PGPORT)/);
      assert.ok(!(result.stdout + result.stderr).includes(url.password));
    }
  });

  it('exits 2 when no database URL is given at all', async () => {
    const result = await runCli(['migrate']);
    assert.equal(result.code, 2);
    assert.match(result.stderr, /missing --database-url/);
  });

  it('reads options from WALBOX_* and rejects a bad value there, naming the variable', async () => {
    const result = await runCli(['migrate'], {
      env: { DATABASE_URL: 'postgres://u@127.0.0.1:1/db', WALBOX_STARTUP_TIMEOUT: 'later' },
    });
    assert.equal(result.code, 2);
    assert.match(result.stderr, /--startup-timeout \(from WALBOX_STARTUP_TIMEOUT\) "later"/);
  });

  it('exits 1 within the startup timeout when PostgreSQL is unreachable, without leaking the password', async () => {
    const port = await findFreePort();
    const result = await runCli([
      'migrate',
      '--database-url',
      `postgres://walbox:hunter2@127.0.0.1:${port}/app`,
      '--startup-timeout',
      '2s',
    ]);
    assert.equal(result.code, 1);
    assert.equal(result.stderr.trim().split('\n').length, 1);
    assert.match(result.stderr, new RegExp(`cannot reach PostgreSQL at 127.0.0.1:${port}/app within 2s`));
    assert.doesNotMatch(result.stderr + result.stdout, /hunter2/);
    assert.ok(result.durationMs < 30_000, `gave up after ${result.durationMs}ms`);
  });

  it('exits 2 at once on wrong credentials (no retry storm)', async () => {
    const url = new URL(requireDatabaseUrl());
    url.password = 'wrong-password';
    const result = await runCli(['migrate', '--database-url', url.toString(), '--startup-timeout', '60s']);
    assert.equal(result.code, 2);
    assert.match(result.stderr, /refused the login \(password authentication failed for user "postgres"\)/);
    assert.doesNotMatch(result.stderr, /wrong-password/);
    assert.ok(result.durationMs < 30_000, 'did not wait for the startup timeout');
  });

  it('exits 3 when the database does not exist', async () => {
    const url = new URL(requireDatabaseUrl());
    url.pathname = '/no_such_database';
    const result = await runCli(['migrate', '--database-url', url.toString()]);
    assert.equal(result.code, 3);
    assert.match(result.stderr, /database "no_such_database" does not exist/);
  });
});
