#!/usr/bin/env node
import yargs from 'yargs';
import { hideBin } from 'yargs/helpers';

import { handleProcessWarnings } from '../observability/handleProcessWarnings.js';
import { cleanupCommand } from './commands/cleanupCommand.js';
import { dlqCommand } from './commands/dlqCommand.js';
import { doctorCommand } from './commands/doctorCommand.js';
import { migrateCommand } from './commands/migrateCommand.js';
import { replayCommand } from './commands/replayCommand.js';
import { runRelayCommand } from './commands/runRelayCommand.js';
import { slotCommand } from './commands/slotCommand.js';
import { statusCommand } from './commands/statusCommand.js';
import { describeUsageError } from './describeUsageError.js';
import { EXIT } from './exitCodeFor.js';
import { normalizeArgs } from './normalizeArgs.js';

/** Parses argv and dispatches; every command handler reports its own errors (runCommand). */
export async function main(argv: readonly string[]): Promise<void> {
  // Node's printer, minus the warnings known to be harmless; `run` sends them to its log instead.
  handleProcessWarnings((warning) => process.stderr.write(`walbox: ${warning.name}: ${warning.message}\n`));
  let args: string[];
  try {
    args = normalizeArgs(hideBin([...argv]));
  } catch (error) {
    process.stderr.write(`walbox: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(EXIT.USAGE);
  }
  await yargs(args)
    .scriptName('walbox')
    .usage(
      'walbox: delivers transactional-outbox events from PostgreSQL to Kafka\n\nUsage: $0 <command> [options]',
    )
    .command(runRelayCommand)
    .command(migrateCommand)
    .command(statusCommand)
    .command(doctorCommand)
    .command(slotCommand)
    .command(dlqCommand)
    .command(replayCommand)
    .command(cleanupCommand)
    .demandCommand(1, 'name a command')
    .strict()
    .recommendCommands()
    .help()
    .alias('help', 'h')
    .version()
    .wrap(Math.min(120, process.stdout.columns || 120))
    .epilogue(
      'Exit codes: 0 success, 1 runtime failure, 2 usage or configuration error, 3 failed precondition.',
    )
    .fail((message, error) => {
      // Handlers catch their own errors, so this is a usage error: one line, exit 2.
      const text = describeUsageError(message || error.message, hideBin([...argv]));
      process.stderr.write(`walbox: ${text} (see walbox --help)\n`);
      process.exit(EXIT.USAGE);
    })
    .parseAsync();
}

if (require.main === module) {
  void main(process.argv);
}
