import type { RelayConfig } from '../config/relayConfig.js';
import { createPool } from '../db/createPool.js';
import { readOutboxStatus } from '../db/readOutboxStatus.js';
import { readSlotStatus } from '../db/readSlotStatus.js';
import { toError } from '../errors.js';
import type { Logger } from '../observability/createLogger.js';
import type { Readiness } from '../observability/readiness.js';
import type { RelayMetrics } from '../observability/relayMetrics.js';
import { sleep } from './sleep.js';

/** Often enough that /readyz turns within 10 s of an outage (one interval plus one probe timeout). */
const PROBE_INTERVAL_MS = 3_000;
const PROBE_TIMEOUT_MS = 3_000;
/** Counting a large backlog is not free: the outbox gauges are sampled less often than the probes run. */
const COUNT_INTERVAL_MS = 15_000;

export interface HealthProbe {
  checkHealth(timeoutMs: number): Promise<void>;
}

/**
 * Samples what the relay cannot see from its own loop: the outbox counts and the slot for the gauges, and whether
 * the broker answers and the slot streams, for /readyz. An idle relay sends nothing to the broker, so without this
 * probe a dead broker would go unnoticed until the next event. Each probe runs on its own timer, so a database
 * that hangs (every query has a timeout) never holds up the broker probe, and the other way round.
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
    timeoutMs: PROBE_TIMEOUT_MS,
  });
  const stopped = new AbortController();
  let lastCount = 0;

  const probeDatabase = async (): Promise<void> => {
    try {
      if (Date.now() - lastCount >= COUNT_INTERVAL_MS) {
        metrics.recordOutboxStatus(await readOutboxStatus(pool, config.schema, config.table));
        lastCount = Date.now();
      }
      if (config.mode === 'wal') {
        const slot = await readSlotStatus(pool, config.slot);
        metrics.recordSlotStatus(slot);
        readiness.setFailing('replication slot', explainSlotProblem(slot, config.slot));
      }
      readiness.setFailing('database', undefined);
    } catch (error) {
      if (!stopped.signal.aborted) {
        readiness.setFailing('database', `cannot read the outbox status: ${toError(error).message}`);
      }
    }
  };
  const probeBroker = async (): Promise<void> => {
    try {
      await options.broker.checkHealth(PROBE_TIMEOUT_MS);
      readiness.setFailing('kafka', undefined);
    } catch (error) {
      if (!stopped.signal.aborted) readiness.setFailing('kafka', toError(error).message);
    }
  };
  const loops = [probeDatabase, probeBroker].map(async (probe) => {
    while (!stopped.signal.aborted) {
      await probe();
      await sleep(PROBE_INTERVAL_MS, stopped.signal).catch(() => undefined);
    }
  });
  return {
    async stop() {
      stopped.abort();
      // A probe in flight ends within its timeout; never wait longer than that to shut down.
      const bounded = (work: Promise<unknown>): Promise<unknown> =>
        Promise.race([work, new Promise((resolve) => setTimeout(resolve, PROBE_TIMEOUT_MS + 1_000).unref())]);
      await bounded(Promise.all(loops));
      await bounded(pool.end().catch(() => undefined));
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
