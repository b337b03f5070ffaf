import type { RelayLogger, RelayObserver, Sleep } from './ports.js';

export interface RetryPolicy {
  readonly initialDelayMs: number;
  readonly maxDelayMs: number;
}

export interface RetryContext {
  readonly policy: RetryPolicy;
  readonly logger: RelayLogger;
  readonly observer: RelayObserver;
  readonly sleep: Sleep;
  /** Aborting gives up waiting (the shutdown timeout); the pending step then rejects. */
  readonly signal: AbortSignal;
}

/** True for errors that say a retry can succeed (WalboxError.retriable); anything else is fatal here. */
function isRetriableError(error: unknown): error is Error & { retriable: true } {
  return error instanceof Error && 'retriable' in error && error.retriable === true;
}

/**
 * Runs `step` until it succeeds, waiting with doubling backoff after each retriable failure, forever (SPEC:
 * outages after startup are retried); non-retriable errors propagate. Every failure is logged with its
 * attempt number, so an outage is never silent.
 */
export async function retryUntilDone<T>(
  name: string,
  step: () => Promise<T>,
  context: RetryContext,
): Promise<T> {
  let delay = context.policy.initialDelayMs;
  for (let attempt = 1; ; attempt++) {
    try {
      const result = await step();
      if (attempt > 1) {
        context.logger.info({ step: name, attempts: attempt }, `${name}: recovered`);
        context.observer.recovered?.({ step: name });
      }
      return result;
    } catch (error) {
      if (!isRetriableError(error) || context.signal.aborted) throw error;
      context.logger.warn({ step: name, attempt, retryInMs: delay, err: error }, `${name} failed; retrying`);
      context.observer.retrying?.({ step: name, attempt, delayMs: delay, error });
      await context.sleep(delay, context.signal);
      delay = Math.min(delay * 2, context.policy.maxDelayMs);
    }
  }
}
