import type { RelayObserver } from '../core/ports.js';
import type { Logger } from './createLogger.js';

/**
 * Whether the pipeline is live: false from the first failed step (broker down, replication lost, database
 * unreachable) until that step succeeds again. Transitions are logged once each, so a stall is never silent
 * (G7); /readyz reports the same flag.
 */
export class Readiness {
  private readonly failing = new Map<string, string>();
  private started = false;

  constructor(private readonly logger: Logger) {}

  isReady(): boolean {
    return this.started && this.failing.size === 0;
  }

  markStarted(): void {
    const wasReady = this.isReady();
    this.started = true;
    if (!wasReady && this.isReady()) this.logger.info({ ready: true }, 'pipeline ready');
  }

  /** What fails now, by step (empty when ready, or when not started yet). */
  failingSteps(): Record<string, string> {
    return Object.fromEntries(this.failing);
  }

  /** A step fails with `reason`, or (undefined) works again. Fed by the retry loops and the health monitor. */
  setFailing(step: string, reason: string | undefined): void {
    const wasReady = this.isReady();
    if (reason === undefined) {
      if (!this.failing.delete(step)) return;
      if (this.isReady()) this.logger.info({ ready: true }, 'pipeline ready');
      return;
    }
    this.failing.set(step, reason);
    if (wasReady) this.logger.warn({ ready: false, step, reason }, 'pipeline not ready');
  }

  /** An observer that feeds this flag from the relay's retry loop. */
  observer(): RelayObserver {
    return {
      retrying: ({ step, error }) => this.setFailing(step, error.message),
      recovered: ({ step }) => this.setFailing(step, undefined),
    };
  }
}
