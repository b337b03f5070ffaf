import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { runCli } from '../support/runCli.js';
import { readPostgresLog } from '../support/stackControl.js';
import { withClient } from '../support/testDatabase.js';
import { requireDatabaseUrl, requireKafkaBrokers } from '../support/testEnv.js';
import { waitFor } from '../support/waitFor.js';

const ATTACKS = ['outbox"; DROP TABLE x; --', "walbox'); DROP TABLE x; --", 'a b', 'x$$; SELECT 1; $$'];
const OPTIONS = ['--schema', '--table', '--publication', '--slot'];

describe('identifier options against injection', () => {
  it('refuses every injection string in every identifier option before anything reaches PostgreSQL (log_statement=all)', async () => {
    await withClient(async (c) => {
      await c.query(`ALTER SYSTEM SET log_statement = 'all'`);
      await c.query('SELECT pg_reload_conf()');
    });
    const marker = `walbox-injection-probe-${Date.now()}`;
    try {
      // Proves the log records statements: this marker must show up.
      await withClient((c) => c.query(`SELECT '${marker}'`));
      await waitFor(() => readPostgresLog().includes(marker), { what: 'log_statement=all in effect' });
      for (const command of ['migrate', 'run']) {
        for (const option of OPTIONS) {
          if (command === 'migrate' && option === '--slot') continue; // migrate takes no slot
          for (const attack of ATTACKS) {
            const brokers = command === 'run' ? ['--kafka-brokers', requireKafkaBrokers().join(',')] : [];
            const result = await runCli([
              command,
              '--database-url',
              requireDatabaseUrl(),
              ...brokers,
              option,
              attack,
            ]);
            assert.equal(result.code, 2, `${command} ${option} ${attack}: ${result.stderr}`);
            assert.match(result.stderr, new RegExp(`invalid ${option}`));
          }
        }
      }
      const log = readPostgresLog();
      for (const attack of ATTACKS)
        assert.equal(log.includes(attack), false, `${attack} reached the server log`);
    } finally {
      await withClient(async (c) => {
        await c.query('ALTER SYSTEM RESET log_statement');
        await c.query('SELECT pg_reload_conf()');
      });
    }
  });
});
