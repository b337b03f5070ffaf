import { toOutboxTable } from '../../config/toOutboxTable.js';
import type { Argv, CommandModule } from 'yargs';

import type { RelayConfig } from '../../config/relayConfig.js';
import { readReplayBatch, summarizeReplay, type ReplaySelection } from '../../db/replayRows.js';
import { ConfigError } from '../../errors.js';
import { escapeControlChars } from '../../observability/escapeControlChars.js';
import { connectKafkaSink } from '../../sink/kafka/connectKafkaSink.js';
import { withCommandDatabase } from '../commandDatabase.js';
import { addConfigOptions, loadCommandConfig } from '../configOptions.js';
import { executeCommand } from '../executeCommand.js';
import { EXIT } from '../exitCodeFor.js';
import { SILENT_LOGGER } from '../silentLogger.js';
import { isEventId } from '../../outbox/isEventId.js';

interface ReplayArgs {
  ids?: string[];
  since?: string;
  until?: string;
  fromSeq?: string;
  toSeq?: string;
  dryRun?: boolean;
}

const SEQ = /^\d{1,19}$/;

export const replayCommand: CommandModule<object, ReplayArgs> = {
  command: 'replay [ids..]',
  describe:
    'publish processed events again, in seq order, to the topics the relay would use: by id, by created_at range (--since/--until) or by seq range (--from-seq/--to-seq); --dry-run counts them',
  builder: (yargs: Argv) =>
    addConfigOptions(yargs, 'replay')
      .positional('ids', { type: 'string', array: true, description: 'event ids (uuid)' })
      .option('since', { type: 'string', description: 'created_at from this time (ISO 8601), inclusive' })
      .option('until', {
        type: 'string',
        description: 'created_at up to this time (ISO 8601), exclusive [default now]',
      })
      .option('from-seq', { type: 'string', description: 'seq from this value, inclusive' })
      .option('to-seq', { type: 'string', description: 'seq up to this value, inclusive' })
      .option('dry-run', { type: 'boolean', description: 'count what would be published; touch nothing' }),
  handler: (argv) =>
    executeCommand('replay', async () => {
      const selection = readSelection(argv);
      const dryRun = argv.dryRun === true;
      const config = loadCommandConfig(
        argv,
        'replay',
        dryRun ? ['databaseUrl'] : ['databaseUrl', 'kafkaBrokers'],
      );
      return dryRun ? countReplay(config, selection) : replay(config, selection);
    }),
};

/** Exactly one way of choosing events, each value checked before anything connects. */
export function readSelection(argv: ReplayArgs): ReplaySelection {
  const ids = (argv.ids ?? []).map(String);
  const byTime = argv.since !== undefined || argv.until !== undefined;
  const bySeq = argv.fromSeq !== undefined || argv.toSeq !== undefined;
  const kinds = [ids.length > 0, byTime, bySeq].filter(Boolean).length;
  if (kinds !== 1) {
    throw new ConfigError('choose the events one way: event ids, --since [--until], or --from-seq --to-seq');
  }
  if (ids.length > 0) {
    const bad = ids.find((id) => !isEventId(id));
    if (bad !== undefined) throw new ConfigError(`${JSON.stringify(bad)} is not an event id (a uuid)`);
    return { kind: 'ids', ids };
  }
  if (byTime) {
    if (argv.since === undefined) throw new ConfigError('--until needs --since');
    const since = readTime('since', argv.since);
    const until = argv.until === undefined ? new Date().toISOString() : readTime('until', argv.until);
    if (Date.parse(until) <= Date.parse(since))
      throw new ConfigError(`--until ${until} is not after --since ${since}`);
    return { kind: 'time', since, until };
  }
  const from = argv.fromSeq;
  const to = argv.toSeq;
  if (from === undefined || to === undefined) throw new ConfigError('give both --from-seq and --to-seq');
  for (const [flag, value] of [
    ['from-seq', from],
    ['to-seq', to],
  ] as const) {
    if (!SEQ.test(value))
      throw new ConfigError(`invalid --${flag} ${JSON.stringify(value)}: must be a seq (an integer)`);
  }
  if (BigInt(to) < BigInt(from)) throw new ConfigError(`--to-seq ${to} is below --from-seq ${from}`);
  return { kind: 'seq', from, to };
}

function readTime(flag: string, value: string): string {
  const ms = Date.parse(value);
  if (Number.isNaN(ms) || !/^\d{4}-\d{2}-\d{2}/.test(value)) {
    throw new ConfigError(
      `invalid --${flag} ${JSON.stringify(value)}: must be an ISO 8601 time such as 2026-12-01T10:00:00Z`,
    );
  }
  return new Date(ms).toISOString();
}

async function countReplay(config: RelayConfig, selection: ReplaySelection): Promise<number> {
  const summary = await withCommandDatabase(config, 'replay', (client) =>
    summarizeReplay(client, toOutboxTable(config), selection),
  );
  const range = summary.firstSeq === null ? '' : ` (seq ${summary.firstSeq}–${summary.lastSeq ?? ''})`;
  process.stdout.write(
    `walbox replay: would publish ${String(summary.events)} processed events of ${String(summary.aggregates)} aggregates${range}\n`,
  );
  return EXIT.OK;
}

/**
 * Publishes the selected processed rows again with the relay's sink (same topics, key, headers and message), in
 * seq order, batch by batch. Rows are read, never changed: a replay repeats deliveries, which consumers dedupe
 * by the `id` header (docs/operations.md says what that means for them).
 */
async function replay(config: RelayConfig, selection: ReplaySelection): Promise<number> {
  const sink = await connectKafkaSink(config, SILENT_LOGGER);
  let published = 0;
  let rejected = 0;
  let lastSeq = '0';
  try {
    await withCommandDatabase(config, 'replay', async (client) => {
      for (;;) {
        const records = await readReplayBatch(
          client,
          toOutboxTable(config),
          selection,
          lastSeq,
          config.batchSize,
        );
        const last = records.at(-1);
        if (last === undefined) return;
        const result = await sink.publish(records);
        for (const { record, reason } of result.rejected) {
          process.stderr.write(`walbox replay: ${record.id} rejected: ${escapeControlChars(reason)}\n`);
        }
        published += records.length - result.rejected.length;
        rejected += result.rejected.length;
        lastSeq = last.seq;
      }
    });
  } catch (error) {
    if (published > 0) {
      process.stderr.write(
        `walbox replay: published ${String(published)} events (up to seq ${lastSeq}) before failing\n`,
      );
    }
    throw error;
  } finally {
    await sink.close();
  }
  process.stdout.write(
    `walbox replay: published ${String(published)} events${rejected > 0 ? `, ${String(rejected)} rejected` : ''}\n`,
  );
  return rejected > 0 ? EXIT.RUNTIME_FAILURE : EXIT.OK;
}
