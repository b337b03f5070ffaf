import { toOutboxTable } from '../../config/toOutboxTable.js';
import type { Argv, CommandModule } from 'yargs';

import { connectDatabase } from '../../db/connectDatabase.js';
import { describeDatabase } from '../../db/describeDatabase.js';
import type { RelayConfig } from '../../config/relayConfig.js';
import { migrate, renderMigrationScript, type MigrateOptions } from '../../db/migrate.js';
import { addConfigOptions, loadCommandConfig } from '../configOptions.js';
import { executeCommand } from '../executeCommand.js';

interface MigrateArgs {
  consumer?: boolean;
  notifyTrigger?: boolean;
  printSql?: boolean;
}

export const migrateCommand: CommandModule<object, MigrateArgs> = {
  command: 'migrate',
  describe: 'create or upgrade the outbox table, its dead-letter view and the publication',
  builder: (yargs: Argv) =>
    addConfigOptions(yargs, 'migrate')
      .option('consumer', {
        type: 'boolean',
        description: 'create the consumer side (processed_events) instead of the outbox',
      })
      .option('notify-trigger', {
        type: 'boolean',
        description: 'install (or with --no-notify-trigger remove) the NOTIFY trigger that wakes poll mode',
      })
      .option('print-sql', {
        type: 'boolean',
        description:
          'print the SQL instead of running it (for Flyway, Liquibase, Prisma or Rails migrations); needs no database',
      }),
  handler: (argv) =>
    executeCommand('migrate', async () => {
      if (argv.printSql === true) {
        process.stdout.write(
          renderMigrationScript(toMigrateOptions(loadCommandConfig(argv, 'migrate', []), argv)),
        );
        return;
      }
      const config = loadCommandConfig(argv, 'migrate');
      const databaseUrl = config.databaseUrl ?? '';
      const client = await connectDatabase({
        databaseUrl,
        startupTimeoutMs: config.startupTimeoutMs,
        applicationName: 'walbox migrate',
      });
      try {
        const options = toMigrateOptions(config, argv);
        const result = await migrate(client, options);
        const target =
          options.consumer === true
            ? `${config.schema}.processed_events`
            : `${config.schema}.${config.table}`;
        const applied =
          result.applied.length === 0 ? 'already up to date' : `applied ${result.applied.join(', ')}`;
        const publication =
          result.publication === 'skipped' ? '' : `; publication ${config.publication} ${result.publication}`;
        process.stdout.write(
          `walbox migrate: ${target} on ${describeDatabase(databaseUrl)}: ${applied}${publication}\n`,
        );
      } finally {
        await client.end().catch(() => undefined);
      }
    }),
};

/** What to migrate (or print): the outbox, or with --consumer the consumer side only. */
function toMigrateOptions(config: RelayConfig, argv: MigrateArgs): MigrateOptions {
  const consumer = argv.consumer === true;
  return {
    schema: config.schema,
    table: config.table,
    columns: toOutboxTable(config).columns,
    publication: config.publication,
    consumer,
    outbox: !consumer,
    notifyTrigger: argv.notifyTrigger,
  };
}
