import type { Argv, CommandModule } from 'yargs';

import { loadConfig } from '../../config/loadConfig.js';
import { startRelay } from '../../daemon/startRelay.js';
import { createLogger } from '../../observability/createLogger.js';
import { addConfigOptions, readConfigFlags } from '../configOptions.js';
import { executeCommand } from '../executeCommand.js';

export const runRelayCommand: CommandModule = {
  command: 'run',
  describe: 'run the relay: stream outbox inserts to Kafka (WAL mode) until SIGTERM',
  builder: (yargs: Argv) => addConfigOptions(yargs, 'run'),
  handler: (argv) =>
    executeCommand('run', async () => {
      const config = loadConfig({
        flags: readConfigFlags(argv, 'run'),
        env: process.env,
        required: ['databaseUrl', 'kafkaBrokers'],
      });
      await startRelay(config, createLogger(config.logLevel, undefined, config.logFormat));
    }),
};
