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

  /** An observer that feeds this flag from the relay's retry loop. */
  observer(): RelayObserver {
    return {
      retrying: ({ step, error }) => {
        const wasReady = this.isReady();
        this.failing.set(step, error.message);
        if (wasReady) this.logger.warn({ ready: false, step, reason: error.message }, 'pipeline not ready');
      },
      recovered: ({ step }) => {
        if (!this.failing.delete(step)) return;
        if (this.isReady()) this.logger.info({ ready: true }, 'pipeline ready');
      },
    };
  }
}
