import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { describeUsageError } from '../../../src/cli/describeUsageError.js';
import { runCli } from '../../support/runCli.js';

const SECRET = 'hunter2';

describe('usage errors (the compiled CLI)', () => {
  for (const args of [
    ['status', `postgres://u:${SECRET}@h/db`],
    [`postgres://u:${SECRET}@h/db`],
    ['migrate', '--tabel', 'x', `postgresql://u:${SECRET}@h:5432/db?sslmode=require`],
    ['status', `host=h password=${SECRET}`],
    ['status', SECRET],
  ]) {
    it(`never echoes a stray argument: walbox ${args.join(' ')}`, async () => {
      const result = await runCli(args, { timeoutMs: 30_000 });
      assert.equal(result.code, 2, result.stderr);
      assert.ok(!result.stderr.includes(SECRET), result.stderr);
      assert.ok(!result.stdout.includes(SECRET), result.stdout);
      assert.equal(result.stderr.trim().split('\n').length, 1, result.stderr);
      assert.match(result.stderr, /unexpected argument \(value not shown: it may hold a secret\)/);
      assert.match(result.stderr, /--database-url or DATABASE_URL/);
    });
  }

  it('still names unknown options', async () => {
    const result = await runCli(['migrate', '--tabel', 'x', `postgres://u:${SECRET}@h/db`], {
      timeoutMs: 30_000,
    });
    assert.match(result.stderr, /^walbox: Unknown argument: --tabel; unexpected argument/);
    const typo = await runCli(['migrate', '--tabel', 'x'], { timeoutMs: 30_000 });
    assert.equal(typo.code, 2);
    assert.equal(typo.stderr, 'walbox: Unknown argument: --tabel (see walbox --help)\n');
  });

  it('hides the password of a URL that yargs quotes for another reason', async () => {
    const result = await runCli(['dlq', `postgres://u:${SECRET}@h/db`], { timeoutMs: 30_000 });
    assert.equal(result.code, 2);
    assert.ok(!result.stderr.includes(SECRET), result.stderr);
    assert.match(result.stderr, /postgres:\/\/u:\*\*\*@h\/db/);
  });
});

describe('describeUsageError', () => {
  it('keeps messages without secrets, naming each unknown option once as typed', () => {
    assert.equal(describeUsageError('Did you mean status?', ['stauts']), 'Did you mean status?');
    assert.equal(
      describeUsageError('Unknown arguments: foo-bar, fooBar, q', ['status', '--foo-bar=1', '-q']),
      // yargs names --foo-bar twice (also as fooBar): once, as typed.
      'Unknown arguments: --foo-bar, -q',
    );
  });

  it('replaces stray values, keeping the unknown option names', () => {
    assert.equal(
      describeUsageError('Unknown arguments: bogus, s3cret, a, b', [
        'status',
        '--bogus',
        'x',
        's3cret, a, b',
      ]),
      'Unknown argument: --bogus; unexpected argument (value not shown: it may hold a secret); ' +
        'pass a database URL as --database-url or DATABASE_URL',
    );
  });

  it('hides URL passwords and password= values in any other message', () => {
    assert.equal(
      describeUsageError(
        'Invalid values:\n  Argument: action, Given: "postgres://u:pw@h/db?password=x", Choices: "list", "retry"',
        ['dlq'],
      ),
      'invalid action "postgres://u:***@h/db?password=***": must be one of list, retry',
    );
  });
});
