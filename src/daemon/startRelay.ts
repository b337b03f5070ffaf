import { toOutboxTable } from '../config/toOutboxTable.js';
import type { RelayConfig } from '../config/relayConfig.js';
import type { RelayRole } from '../core/relayRole.js';
import { connectDatabase } from '../db/connectDatabase.js';
import { describeDatabase } from '../db/describeDatabase.js';
import { describePgTls, warnAboutPgTls } from '../db/pgClientConfig.js';
import { assertPreflight, runPreflight } from '../source/wal/walPreflight.js';
import { WalboxError } from '../errors.js';
import type { Logger } from '../observability/createLogger.js';
import { connectKafkaSink } from '../sink/kafka/connectKafkaSink.js';
import { describeKafkaSecurity } from '../sink/kafka/kafkaSecurity.js';
import type { KafkaSink } from '../sink/kafka/kafkaSink.js';
import { combineObservers } from '../observability/combineObservers.js';
import { startMetricsServer, type MetricsServer } from '../observability/metricsServer.js';
import { Readiness } from '../observability/readiness.js';
import { RelayMetrics } from '../observability/relayMetrics.js';
import { handleSignals } from './handleSignals.js';
import { monitorRelay } from './monitorRelay.js';
import { runPollRelay } from './runPollRelay.js';
import { runWalRelay } from './runWalRelay.js';

function rejectOnAbort(signal: AbortSignal): Promise<never> {
  return new Promise((_resolve, reject) => {
    signal.addEventListener('abort', () => reject(signal.reason as Error), { once: true });
  });
}

/** Fails fast (exit 1) when PostgreSQL is unreachable, and with every failed check (exit 3) before Kafka is touched. */
async function checkPreflight(config: RelayConfig, databaseUrl: string, logger: Logger): Promise<void> {
  const client = await connectDatabase({
    databaseUrl,
    startupTimeoutMs: config.startupTimeoutMs,
    applicationName: config.applicationName,
  });
  try {
    logger.info({ tls: describePgTls(client, databaseUrl) }, 'connected to PostgreSQL');
    const warning = warnAboutPgTls(client, databaseUrl);
    if (warning !== undefined) logger.warn(warning);
    assertPreflight(
      await runPreflight(client, { ...config, columns: toOutboxTable(config).columns }, config.mode),
    );
  } finally {
    await client.end().catch(() => undefined);
  }
}

/**
 * The composition root: config → sink → source → relay, plus signals. Resolves when the relay stopped
 * gracefully (everything in flight delivered and confirmed); rejects otherwise.
 */
export async function startRelay(config: RelayConfig, logger: Logger): Promise<void> {
  const databaseUrl = config.databaseUrl ?? '';
  logger.info(
    {
      mode: config.mode,
      database: describeDatabase(databaseUrl),
      kafka: config.kafkaBrokers.join(','),
      schema: config.schema,
      table: config.table,
      slot: config.slot,
      publication: config.publication,
      topic: config.topic ?? config.topicTemplate,
      kafkaSecurity: describeKafkaSecurity(config),
    },
    'walbox starting',
  );
  if (config.kafkaSslInsecure) {
    logger.warn(
      "--kafka-ssl-insecure: the brokers' certificates and host names are NOT verified; anyone on the path can " +
        'read and change events. Set --kafka-ssl-ca-file instead',
    );
  }
  await checkPreflight(config, databaseUrl, logger);
  const signals = handleSignals(config.shutdownTimeoutMs, (signal) =>
    logger.info({ signal }, 'stopping: draining in-flight events (a second signal exits at once)'),
  );
  const readiness = new Readiness(logger);
  const metrics = new RelayMetrics(config.mode);
  metrics.trackReadiness(() => readiness.isReady());
  let sink: KafkaSink | undefined;
  let server: MetricsServer | undefined;
  let monitor: { stop(): Promise<void> } | undefined;
  try {
    if (config.metricsPort !== 0) {
      server = await startMetricsServer({
        host: config.metricsHost,
        port: config.metricsPort,
        metrics,
        readiness,
        logger,
      });
      logger.info(
        { url: `http://${config.metricsHost}:${server.port}` },
        'serving /metrics, /healthz and /readyz',
      );
    }
    sink = await connectKafkaSink(config, logger);
    await sink.requireDeadLetterTopic();
    monitor = monitorRelay({ config, databaseUrl, broker: sink, metrics, readiness, logger });
    const context = {
      config,
      databaseUrl,
      sink,
      logger,
      observer: combineObservers(readiness.observer(), metrics.observer()),
      stop: signals.stop,
      giveUp: signals.giveUp,
      onRole: (role: RelayRole) => {
        readiness.setRole(role);
        metrics.recordRole(role);
      },
    };
    // Giving up does not wait for a call in flight (a query waiting on a lock, a broker request). WAL mode has
    // closed its replication connection by then without confirming more; poll mode holds no position (the
    // claimed rows' transaction rolls back).
    const relay = config.mode === 'wal' ? runWalRelay(context) : runPollRelay(context);
    await Promise.race([relay, rejectOnAbort(signals.giveUp)]);
  } catch (error) {
    if (signals.giveUp.aborted && error === signals.giveUp.reason) throw error;
    if (error instanceof WalboxError) throw error;
    throw new WalboxError(
      'INTERNAL',
      `relay failed: ${error instanceof Error ? error.message : String(error)}`,
      {
        cause: error,
      },
    );
  } finally {
    signals.dispose();
    await monitor?.stop();
    await sink?.close();
    await server?.close();
  }
}
