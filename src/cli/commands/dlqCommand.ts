import { toOutboxTable } from '../../config/toOutboxTable.js';
import type { Argv, CommandModule } from 'yargs';

import type { RelayConfig } from '../../config/relayConfig.js';
import {
  listDeadLetters,
  lockDeadLetters,
  markRedelivered,
  purgeDeadLetters,
  recordRedeliveryFailure,
  skipPendingRows,
  type DeadLetterSelection,
} from '../../db/deadLetters.js';
import { ConfigError } from '../../errors.js';
import { escapeControlChars, escapeControlCharsInJson } from '../../observability/escapeControlChars.js';
import { connectKafkaSink } from '../../sink/kafka/connectKafkaSink.js';
import { withCommandDatabase } from '../commandDatabase.js';
import { addConfigOptions, loadCommandConfig } from '../configOptions.js';
import { executeCommand } from '../executeCommand.js';
import { EXIT } from '../exitCodeFor.js';
import { formatDeadLetterLine } from '../formatDeadLetterLine.js';
import { SILENT_LOGGER } from '../silentLogger.js';
import { isEventId } from '../../outbox/isEventId.js';

type DlqAction = 'list' | 'retry' | 'purge' | 'skip';

interface DlqArgs {
  action?: DlqAction;
  ids?: string[];
  all?: boolean;
  limit?: number;
  json?: boolean;
}

/** Retries go in chunks: each chunk is locked, published and marked in one short transaction. */
const RETRY_CHUNK = 500;

export const dlqCommand: CommandModule<object, DlqArgs> = {
  command: 'dlq <action> [ids..]',
  describe:
    'list dead letters, re-deliver them to Kafka (retry <id…> | --all), delete them (purge <id…> | --all), or dead-letter pending events that hold up the relay (skip <id…>)',
  builder: (yargs: Argv) =>
    addConfigOptions(yargs, 'dlq')
      .positional('action', { choices: ['list', 'retry', 'purge', 'skip'] as const, demandOption: true })
      .positional('ids', { type: 'string', array: true, description: 'event ids (uuid)' })
      .option('all', { type: 'boolean', description: 'retry or purge every dead letter' })
      .option('limit', { type: 'number', description: 'list: at most this many [default 100]' })
      .option('json', { type: 'boolean', description: 'list: print JSON' }),
  handler: (argv) =>
    executeCommand('dlq', async () => {
      const action = argv.action ?? 'list';
      const config = loadCommandConfig(
        argv,
        'dlq',
        action === 'retry' ? ['databaseUrl', 'kafkaBrokers'] : ['databaseUrl'],
      );
      if (action === 'list') return listCommand(config, argv);
      const selection = readSelection(action, argv);
      if (action === 'skip') return skipCommand(config, selection);
      return action === 'retry' ? retryCommand(config, selection) : purgeCommand(config, selection);
    }),
};

function readSelection(action: DlqAction, argv: DlqArgs): DeadLetterSelection {
  const ids = (argv.ids ?? []).map(String);
  if (argv.all === true && ids.length > 0)
    throw new ConfigError(`dlq ${action}: give ids or --all, not both`);
  if (argv.all === true) return { all: true };
  if (ids.length === 0) throw new ConfigError(`dlq ${action}: name the event ids, or pass --all`);
  const bad = ids.find((id) => !isEventId(id));
  if (bad !== undefined)
    throw new ConfigError(`dlq ${action}: ${JSON.stringify(bad)} is not an event id (a uuid)`);
  return { ids };
}

async function listCommand(config: RelayConfig, argv: DlqArgs): Promise<number> {
  const limit = argv.limit ?? 100;
  if (!Number.isInteger(limit) || limit < 1)
    throw new ConfigError('dlq list: --limit must be a positive integer');
  const letters = await withCommandDatabase(config, 'dlq', (client) =>
    listDeadLetters(client, toOutboxTable(config), limit),
  );
  if (argv.json === true) {
    // Valid JSON either way; escaped so that `dlq list --json` on a terminal is as safe as the table.
    process.stdout.write(`${escapeControlCharsInJson(JSON.stringify(letters, null, 2))}\n`);
    return EXIT.OK;
  }
  if (letters.length === 0) {
    process.stdout.write('walbox dlq: no dead letters\n');
    return EXIT.OK;
  }
  for (const letter of letters) process.stdout.write(formatDeadLetterLine(letter));
  return EXIT.OK;
}

/**
 * Publishes dead letters again with the relay's sink (same topics, key and headers) and marks them processed:
 * this works in both modes, since WAL mode streams inserts only and would never see a reset row.
 */
async function retryCommand(config: RelayConfig, selection: DeadLetterSelection): Promise<number> {
  const sink = await connectKafkaSink(config, SILENT_LOGGER);
  let delivered = 0;
  let failed = 0;
  const tried = new Set<string>();
  try {
    await withCommandDatabase(config, 'dlq', async (client) => {
      for (;;) {
        await client.query('BEGIN');
        try {
          const records = await lockDeadLetters(client, toOutboxTable(config), selection, RETRY_CHUNK, [
            ...tried,
          ]);
          if (records.length === 0) {
            await client.query('COMMIT');
            return;
          }
          for (const r of records) tried.add(r.id);
          const { rejected } = await sink.publish(records);
          const rejectedIds = new Set(rejected.map((r) => r.record.id));
          const published = records.filter((r) => !rejectedIds.has(r.id)).map((r) => r.id);
          await markRedelivered(client, toOutboxTable(config), published);
          for (const { record, reason } of rejected) {
            await recordRedeliveryFailure(client, toOutboxTable(config), [record.id], reason);
            process.stderr.write(`walbox dlq: ${record.id} rejected again: ${escapeControlChars(reason)}\n`);
          }
          await client.query('COMMIT');
          delivered += published.length;
          failed += rejected.length;
        } catch (error) {
          await client.query('ROLLBACK').catch(() => undefined);
          throw error;
        }
      }
    });
  } catch (error) {
    // What was re-delivered is marked (chunks commit one by one): say so before the error is reported.
    if (delivered > 0)
      process.stderr.write(`walbox dlq: re-delivered ${String(delivered)} events before failing\n`);
    throw error;
  } finally {
    await sink.close();
  }
  process.stdout.write(
    `walbox dlq: re-delivered ${String(delivered)} events${failed > 0 ? `, ${String(failed)} rejected again` : ''}\n`,
  );
  if (failed > 0) return EXIT.RUNTIME_FAILURE;
  return reportMissing(selection, tried);
}

async function skipCommand(config: RelayConfig, selection: DeadLetterSelection): Promise<number> {
  // Skipping every pending event would stop delivery wholesale: only named events.
  if ('all' in selection) throw new ConfigError('dlq skip: name the event ids; --all is not accepted');
  const skipped = await withCommandDatabase(config, 'dlq', (client) =>
    skipPendingRows(client, toOutboxTable(config), selection.ids),
  );
  process.stdout.write(
    `walbox dlq: dead-lettered ${String(skipped.length)} pending events (walbox dlq retry re-delivers them)\n`,
  );
  const missing = selection.ids.filter((id) => !skipped.includes(id.toLowerCase()));
  if (missing.length === 0) return EXIT.OK;
  process.stderr.write(
    `walbox dlq: not pending (unknown, processed or dead-lettered): ${missing.join(', ')}\n`,
  );
  return EXIT.PRECONDITION;
}

async function purgeCommand(config: RelayConfig, selection: DeadLetterSelection): Promise<number> {
  const purged = await withCommandDatabase(config, 'dlq', (client) =>
    purgeDeadLetters(client, toOutboxTable(config), selection),
  );
  process.stdout.write(`walbox dlq: deleted ${String(purged.length)} dead letters\n`);
  return reportMissing(selection, new Set(purged));
}

/** Ids the operator named that are not dead letters (unknown, pending or processed): a failed precondition. */
function reportMissing(selection: DeadLetterSelection, found: ReadonlySet<string>): number {
  if ('all' in selection) return EXIT.OK;
  const missing = selection.ids.filter((id) => !found.has(id.toLowerCase()));
  if (missing.length === 0) return EXIT.OK;
  process.stderr.write(
    `walbox dlq: not dead letters (unknown, pending or processed): ${missing.join(', ')}\n`,
  );
  return EXIT.PRECONDITION;
}
