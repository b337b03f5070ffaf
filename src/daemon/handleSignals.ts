import { WalboxError } from '../errors.js';

export interface ShutdownSignals {
  /** Aborted by the first SIGTERM/SIGINT: stop reading, drain in-flight events, confirm, exit 0. */
  readonly stop: AbortSignal;
  /** Aborted when draining takes longer than --shutdown-timeout: give up without confirming anything unacked. */
  readonly giveUp: AbortSignal;
  dispose(): void;
}

/** Wires SIGTERM/SIGINT: the first asks for a graceful stop, a second one exits at once (exit 1). */
export function handleSignals(
  shutdownTimeoutMs: number,
  onSignal: (signal: string) => void,
): ShutdownSignals {
  const stop = new AbortController();
  const giveUp = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const handler = (signal: NodeJS.Signals): void => {
    if (stop.signal.aborted) {
      process.exit(1);
    }
    onSignal(signal);
    stop.abort(new WalboxError('INTERNAL', `stopping on ${signal}`));
    timer = setTimeout(() => {
      giveUp.abort(
        new WalboxError(
          'SHUTDOWN_TIMEOUT',
          `in-flight events not delivered within --shutdown-timeout (${shutdownTimeoutMs}ms); exiting without confirming them`,
        ),
      );
    }, shutdownTimeoutMs);
    timer.unref();
  };
  process.on('SIGTERM', handler);
  process.on('SIGINT', handler);
  return {
    stop: stop.signal,
    giveUp: giveUp.signal,
    dispose: () => {
      if (timer !== undefined) clearTimeout(timer);
      process.off('SIGTERM', handler);
      process.off('SIGINT', handler);
    },
  };
}
