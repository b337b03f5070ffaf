import type { Argv, CommandModule } from 'yargs';

import { formatDuration, parseDuration } from '../../config/parseDuration.js';
import type { RelayConfig } from '../../config/relayConfig.js';
import { deleteProcessedRows } from '../../db/deleteProcessedRows.js';
import { dropProcessedPartitions } from '../../db/dropProcessedPartitions.js';
import { ConfigError } from '../../errors.js';
import { withCommandDatabase } from '../commandDatabase.js';
import { addConfigOptions, loadCommandConfig } from '../configOptions.js';
import { executeCommand } from '../executeCommand.js';

interface CleanupArgs {
  olderThan?: string;
  includeDeadLetters?: boolean;
  batch?: number;
  dropPartitions?: boolean;
  lockTimeout?: string;
}

export const cleanupCommand: CommandModule<object, CleanupArgs> = {
  command: 'cleanup',
  describe:
    'delete processed rows older than --older-than, in batches, or drop whole partitions of them (pending rows are never touched)',
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
      .option('batch', { type: 'number', description: 'rows per DELETE [default 1000]' })
      .option('drop-partitions', {
        type: 'boolean',
        description:
          'partitioned outbox (RANGE on created_at): drop the partitions whose range ends before the cutoff and ' +
          'whose rows are all old enough, instead of deleting rows',
      })
      .option('lock-timeout', {
        type: 'string',
        description:
          "with --drop-partitions: how long to wait for the outbox's lock before leaving a partition for the next run [default 3s]",
      }),
  handler: (argv) =>
    executeCommand('cleanup', async () => {
      const config = loadCommandConfig(argv, 'cleanup');
      const olderThanMs = parseDuration(argv.olderThan ?? '');
      if (olderThanMs === undefined || olderThanMs <= 0) {
        throw new ConfigError(
          `--older-than ${JSON.stringify(argv.olderThan ?? '')} is not a duration (e.g. 7d, 12h)`,
        );
      }
      const includeDeadLetters = argv.includeDeadLetters === true;
      const which = includeDeadLetters ? 'processed or dead-lettered' : 'processed';
      if (argv.dropPartitions === true) {
        await dropPartitions(config, argv, olderThanMs, includeDeadLetters, which);
        return;
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
          includeDeadLetters,
        }),
      );
      process.stdout.write(
        `walbox cleanup: deleted ${String(deleted)} rows of ${config.schema}.${config.table} ` +
          `${which} more than ${formatDuration(olderThanMs)} ago\n`,
      );
    }),
};

/** --drop-partitions: one line per partition dropped or kept, then the total. */
async function dropPartitions(
  config: RelayConfig,
  argv: CleanupArgs,
  olderThanMs: number,
  includeDeadLetters: boolean,
  which: string,
): Promise<void> {
  const lockTimeoutMs = parseDuration(argv.lockTimeout ?? '3s');
  if (lockTimeoutMs === undefined || lockTimeoutMs <= 0) {
    throw new ConfigError(
      `--lock-timeout ${JSON.stringify(argv.lockTimeout ?? '')} is not a duration (e.g. 3s, 500ms)`,
    );
  }
  const result = await withCommandDatabase(config, 'cleanup', (client) =>
    dropProcessedPartitions(client, {
      schema: config.schema,
      table: config.table,
      olderThanMs,
      includeDeadLetters,
      lockTimeoutMs,
    }),
  );
  const lines = [
    ...result.dropped.map((p) => `walbox cleanup: dropped partition ${p.partition} (${String(p.rows)} rows)`),
    ...result.kept.map(
      (p) => `walbox cleanup: kept partition ${p.partition} (${String(p.rows)} rows): ${p.reason ?? ''}`,
    ),
    `walbox cleanup: dropped ${String(result.dropped.length)} partitions ` +
      `(${String(result.dropped.reduce((sum, p) => sum + p.rows, 0))} rows) of ${config.schema}.${config.table} ` +
      `whose range ended and whose rows were all ${which} more than ${formatDuration(olderThanMs)} ago`,
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
}
