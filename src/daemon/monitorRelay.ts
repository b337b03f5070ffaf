import type { RelayConfig } from '../config/relayConfig.js';
import { createPool } from '../db/createPool.js';
import { readOutboxStatus } from '../db/readOutboxStatus.js';
import { readSlotStatus } from '../db/readSlotStatus.js';
import { toError } from '../errors.js';
import type { Logger } from '../observability/createLogger.js';
import type { Readiness } from '../observability/readiness.js';
import type { RelayMetrics } from '../observability/relayMetrics.js';

/** Often enough that /readyz turns within 10 s of an outage (one interval plus one health timeout). */
export const MONITOR_INTERVAL_MS = 3_000;
const HEALTH_TIMEOUT_MS = 3_000;

export interface HealthProbe {
  checkHealth(timeoutMs: number): Promise<void>;
}

/**
 * Samples what the relay cannot see from its own loop, every few seconds: the outbox counts and the slot for the
 * gauges, and whether the broker answers and the slot is streaming, for /readyz. An idle relay sends nothing to
 * the broker, so without this probe a dead broker would go unnoticed until the next event.
 */
export function monitorRelay(options: {
  readonly config: RelayConfig;
  readonly databaseUrl: string;
  readonly broker: HealthProbe;
  readonly metrics: RelayMetrics;
  readonly readiness: Readiness;
  readonly logger: Logger;
}): { stop(): Promise<void> } {
  const { config, metrics, readiness } = options;
  const pool = createPool(options.databaseUrl, {
    applicationName: 'walbox monitor',
    max: 1,
    logger: options.logger,
  });
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;

  const sampleDatabase = async (): Promise<void> => {
    try {
      metrics.recordOutboxStatus(await readOutboxStatus(pool, config.schema, config.table));
      if (config.mode === 'wal') {
        const slot = await readSlotStatus(pool, config.slot);
        metrics.recordSlotStatus(slot);
        readiness.setFailing('replication slot', explainSlotProblem(slot, config.slot));
      }
      readiness.setFailing('database', undefined);
    } catch (error) {
      readiness.setFailing('database', `cannot read the outbox status: ${toError(error).message}`);
    }
  };
  const probeBroker = async (): Promise<void> => {
    try {
      await options.broker.checkHealth(HEALTH_TIMEOUT_MS);
      readiness.setFailing('kafka', undefined);
    } catch (error) {
      readiness.setFailing('kafka', toError(error).message);
    }
  };
  const tick = async (): Promise<void> => {
    await Promise.all([sampleDatabase(), probeBroker()]);
    if (!stopped) timer = setTimeout(() => void tick(), MONITOR_INTERVAL_MS);
  };
  void tick();
  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await pool.end().catch(() => undefined);
    },
  };
}

function explainSlotProblem(
  slot: { exists: boolean; active: boolean; walStatus: string | null },
  name: string,
): string | undefined {
  if (!slot.exists) return `replication slot ${name} does not exist`;
  if (slot.walStatus === 'lost') return `replication slot ${name} was invalidated (wal_status lost)`;
  if (!slot.active) return `replication slot ${name} is not streaming`;
  return undefined;
}
