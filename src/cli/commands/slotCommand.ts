import type { Argv, CommandModule } from 'yargs';

import { readSlotStatus } from '../../db/readSlotStatus.js';
import { PreconditionError } from '../../errors.js';
import { decideSlotFailover, readServerVersion } from '../../source/wal/slotFailover.js';
import { withCommandDatabase } from '../commandDatabase.js';
import { addConfigOptions, loadCommandConfig } from '../configOptions.js';
import { executeCommand } from '../executeCommand.js';
import { formatBytes, formatTable } from '../formatUnits.js';

type SlotAction = 'create' | 'drop' | 'info';

interface SlotArgs {
  action?: SlotAction;
  json?: boolean;
}

export const slotCommand: CommandModule<object, SlotArgs> = {
  command: 'slot <action>',
  describe: 'create, drop or inspect the replication slot (create: the relay catches up on first start)',
  builder: (yargs: Argv) =>
    addConfigOptions(yargs, 'slot')
      .positional('action', { choices: ['create', 'drop', 'info'] as const, demandOption: true })
      .option('json', { type: 'boolean', description: 'info: print JSON' }),
  handler: (argv) =>
    executeCommand('slot', async () => {
      const config = loadCommandConfig(argv, 'slot');
      const slot = config.slot;
      await withCommandDatabase(config, 'slot', async (client) => {
        const status = await readSlotStatus(client, slot);
        switch (argv.action) {
          case 'create':
            if (status.exists) {
              process.stdout.write(`walbox slot: ${slot} already exists\n`);
              return;
            }
            // The relay sees a slot it has no record of and first delivers what is pending in the table.
            if (decideSlotFailover(config.slotFailover, await readServerVersion(client))) {
              await client.query(
                `SELECT pg_create_logical_replication_slot($1, 'pgoutput', failover => true)`,
                [slot],
              );
              process.stdout.write(`walbox slot: created ${slot} (pgoutput, failover)\n`);
              return;
            }
            await client.query(`SELECT pg_create_logical_replication_slot($1, 'pgoutput')`, [slot]);
            process.stdout.write(`walbox slot: created ${slot} (pgoutput)\n`);
            return;
          case 'drop':
            if (!status.exists) {
              process.stdout.write(`walbox slot: ${slot} does not exist\n`);
              return;
            }
            if (status.active) {
              throw new PreconditionError(
                `slot ${slot} is in use by pid ${String(status.activePid)}: stop the relay first`,
              );
            }
            await client.query('SELECT pg_drop_replication_slot($1)', [slot]);
            process.stdout.write(
              `walbox slot: dropped ${slot}; the server frees its WAL, and the next walbox run creates a new ` +
                'slot and delivers the rows still pending in the table\n',
            );
            return;
          default:
            if (argv.json === true) {
              process.stdout.write(`${JSON.stringify(status, null, 2)}\n`);
              return;
            }
            process.stdout.write(
              status.exists
                ? `walbox slot: ${slot}\n${formatTable([
                    ['active', status.active ? `yes (pid ${String(status.activePid)})` : 'no'],
                    ['plugin', status.plugin ?? '—'],
                    [
                      'failover',
                      status.failover === null ? '— (PostgreSQL 17+)' : status.failover ? 'yes' : 'no',
                    ],
                    ['confirmed_flush_lsn', status.confirmedFlushLsn ?? '—'],
                    ['restart_lsn', status.restartLsn ?? '—'],
                    ['lag', formatBytes(status.lagBytes)],
                    ['retained WAL', formatBytes(status.retainedWalBytes)],
                    ['wal_status', status.walStatus ?? '—'],
                    [
                      'safe_wal_size',
                      status.safeWalSizeBytes === null ? 'unlimited' : formatBytes(status.safeWalSizeBytes),
                    ],
                  ])}`
                : `walbox slot: ${slot} does not exist\n`,
            );
        }
      });
    }),
};
