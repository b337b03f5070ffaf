import { toOutboxTable } from '../../config/toOutboxTable.js';
import type { Argv, CommandModule } from 'yargs';

import { describeDatabase } from '../../db/describeDatabase.js';
import { describePgTls, warnAboutPgTls } from '../../db/pgClientConfig.js';
import { toError } from '../../errors.js';
import { connectKafkaSink } from '../../sink/kafka/connectKafkaSink.js';
import { describeKafkaSecurity } from '../../sink/kafka/kafkaSecurity.js';
import type { RelayConfig } from '../../config/relayConfig.js';
import { SILENT_LOGGER } from '../silentLogger.js';
import { runPreflight, type PreflightCheck } from '../../source/wal/walPreflight.js';
import { withCommandDatabase } from '../commandDatabase.js';
import { addConfigOptions, loadCommandConfig } from '../configOptions.js';
import { executeCommand } from '../executeCommand.js';
import { EXIT } from '../exitCodeFor.js';

export const doctorCommand: CommandModule = {
  command: 'doctor',
  describe: 'run every preflight check of the mode and print PASS/FAIL with the fix; exit 3 on a failure',
  builder: (yargs: Argv) => addConfigOptions(yargs, 'doctor'),
  handler: (argv) =>
    executeCommand('doctor', async () => {
      const config = loadCommandConfig(argv, 'doctor');
      process.stdout.write(
        `walbox doctor: ${config.mode} mode, ${config.schema}.${config.table} on ${describeDatabase(config.databaseUrl ?? '')}\n`,
      );
      const databaseUrl = config.databaseUrl ?? '';
      const checks = await withCommandDatabase(config, 'doctor', async (client) => {
        const warning = warnAboutPgTls(client, databaseUrl);
        // Unverified encryption works, so it passes, with the warning the relay also logs at every start.
        const tls: PreflightCheck = {
          name: 'postgres tls',
          ok: true,
          detail:
            describePgTls(client, databaseUrl) + (warning === undefined ? '' : ` (WARNING: ${warning})`),
        };
        return [
          tls,
          ...(await runPreflight(client, { ...config, columns: toOutboxTable(config).columns }, config.mode)),
        ];
      });
      checks.push(await checkKafka(config));
      for (const check of checks) {
        process.stdout.write(`${check.ok ? 'PASS' : 'FAIL'}  ${check.name}: ${check.detail}\n`);
      }
      const failed = checks.filter((c) => !c.ok).length;
      process.stdout.write(failed === 0 ? 'all checks passed\n' : `${String(failed)} checks failed\n`);
      return failed === 0 ? EXIT.OK : EXIT.PRECONDITION;
    }),
};

async function checkKafka(config: RelayConfig): Promise<PreflightCheck> {
  if (config.kafkaBrokers.length === 0) {
    return {
      name: 'kafka',
      ok: false,
      detail: 'no brokers given: pass --kafka-brokers host:9092 (or set KAFKA_BROKERS)',
    };
  }
  const security =
    describeKafkaSecurity(config) +
    (config.kafkaSslInsecure ? ' (WARNING: set --kafka-ssl-ca-file instead of --kafka-ssl-insecure)' : '');
  try {
    const sink = await connectKafkaSink(config, SILENT_LOGGER);
    await sink.close();
    return {
      name: 'kafka',
      ok: true,
      detail: `brokers ${config.kafkaBrokers.join(',')} answer (${security})`,
    };
  } catch (error) {
    return { name: 'kafka', ok: false, detail: toError(error).message };
  }
}
