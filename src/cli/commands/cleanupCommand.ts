import type { Argv, CommandModule } from 'yargs';

import { formatDuration, parseDuration } from '../../config/parseDuration.js';
import { deleteProcessedRows } from '../../db/deleteProcessedRows.js';
import { ConfigError } from '../../errors.js';
import { withCommandDatabase } from '../commandDatabase.js';
import { addConfigOptions, loadCommandConfig } from '../configOptions.js';
import { executeCommand } from '../executeCommand.js';

interface CleanupArgs {
  olderThan?: string;
  includeDeadLetters?: boolean;
  batch?: number;
}

export const cleanupCommand: CommandModule<object, CleanupArgs> = {
  command: 'cleanup',
  describe: 'delete processed rows older than --older-than, in batches (pending rows are never touched)',
  builder: (yargs: Argv) =>
    addConfigOptions(yargs, 'cleanup')
      .option('older-than', {
        type: 'string',
        demandOption: true,
        description: 'age of the rows to delete, e.g. 7d or 12h',
      })
      .option('include-dead-letters', {
        type: 'boolean',
        description: 'also delete dead letters older than that',
      })
      .option('batch', { type: 'number', description: 'rows per DELETE [default 1000]' }),
  handler: (argv) =>
    executeCommand('cleanup', async () => {
      const config = loadCommandConfig(argv, 'cleanup');
      const olderThanMs = parseDuration(argv.olderThan ?? '');
      if (olderThanMs === undefined || olderThanMs <= 0) {
        throw new ConfigError(
          `--older-than ${JSON.stringify(argv.olderThan ?? '')} is not a duration (e.g. 7d, 12h)`,
        );
      }
      const batchSize = argv.batch ?? 1_000;
      if (!Number.isInteger(batchSize) || batchSize < 1)
        throw new ConfigError('--batch must be a positive integer');
      const deleted = await withCommandDatabase(config, 'cleanup', (client) =>
        deleteProcessedRows(client, {
          schema: config.schema,
          table: config.table,
          olderThanMs,
          batchSize,
          includeDeadLetters: argv.includeDeadLetters === true,
        }),
      );
      process.stdout.write(
        `walbox cleanup: deleted ${String(deleted)} rows of ${config.schema}.${config.table} ` +
          `${argv.includeDeadLetters === true ? 'processed or dead-lettered' : 'processed'} more than ` +
          `${formatDuration(olderThanMs)} ago\n`,
      );
    }),
};
