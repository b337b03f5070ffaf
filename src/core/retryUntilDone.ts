import { summarizeError } from '../errors.js';
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

function isMisconfiguration(error: Error): boolean {
  return 'code' in error && error.code === 'SINK_MISCONFIGURED';
}

/**
 * Runs `step` until it succeeds, waiting with doubling backoff after each retriable failure, forever (an
 * outage after startup is retried, never fatal); non-retriable errors propagate. Every failure is logged with its
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
      // The message and code on each retry; the stack (the same every time) at debug only.
      const fields = { step: name, attempt, retryInMs: delay, err: summarizeError(error) };
      if (isMisconfiguration(error)) {
        // Not an outage: it lasts until someone changes the configuration; say so as an error.
        context.logger.error(fields, `${name} failed: a configuration error; retrying until it is fixed`);
      } else {
        context.logger.warn(fields, `${name} failed; retrying`);
      }
      context.logger.debug({ step: name, err: error }, `${name} failed`);
      context.observer.retrying?.({ step: name, attempt, delayMs: delay, error });
      await context.sleep(delay, context.signal);
      delay = Math.min(delay * 2, context.policy.maxDelayMs);
    }
  }
}
