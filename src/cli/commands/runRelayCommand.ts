import type { Argv, CommandModule } from 'yargs';

import { loadConfig } from '../../config/loadConfig.js';
import { connectDatabase } from '../../db/connectDatabase.js';
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
      const logger = createLogger(config.logLevel);
      // Fail fast (exit 1) when PostgreSQL cannot be reached within --startup-timeout.
      const probe = await connectDatabase({
        databaseUrl: config.databaseUrl ?? '',
        startupTimeoutMs: config.startupTimeoutMs,
        applicationName: 'walbox',
      });
      await probe.end();
      await startRelay(config, logger);
    }),
};
