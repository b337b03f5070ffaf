import type { Argv, CommandModule } from 'yargs';

import { startRelay } from '../../daemon/startRelay.js';
import { WalboxError } from '../../errors.js';
import { createLogger } from '../../observability/createLogger.js';
import { handleProcessWarnings } from '../../observability/handleProcessWarnings.js';
import { addConfigOptions, loadCommandConfig } from '../configOptions.js';
import { executeCommand } from '../executeCommand.js';

export const runRelayCommand: CommandModule = {
  command: 'run',
  describe: 'run the relay: stream outbox inserts to Kafka (WAL mode) until SIGTERM',
  builder: (yargs: Argv) => addConfigOptions(yargs, 'run'),
  handler: (argv) =>
    executeCommand('run', async () => {
      const config = loadCommandConfig(argv, 'run', ['databaseUrl', 'kafkaBrokers']);
      try {
        const logger = createLogger(config.logLevel, { format: config.logFormat });
        handleProcessWarnings((warning) => logger.warn({ warning: warning.name }, warning.message));
        await startRelay(config, logger);
      } catch (error) {
        // After --shutdown-timeout a call still in flight (a query waiting on a lock) must not keep us running.
        if (error instanceof WalboxError && error.code === 'SHUTDOWN_TIMEOUT') {
          setTimeout(() => process.exit(), 1_000).unref();
        }
        throw error;
      }
    }),
};
