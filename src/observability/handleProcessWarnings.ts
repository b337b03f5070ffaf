import type { EventEmitter } from 'node:events';

/**
 * kafkajs 2.2.4 schedules its request-queue check with a negative delay on every connection; Node 24 reports it
 * as a TimeoutNegativeWarning (kafkajs issue 1751). The timer runs after 1 ms either way, as it did silently on
 * older Node versions: nothing to act on.
 */
export function isKnownHarmlessWarning(warning: Error): boolean {
  return warning.name === 'TimeoutNegativeWarning' && /[\\/]kafkajs[\\/]/.test(warning.stack ?? '');
}

/**
 * Replaces Node's own warning printer (plain text on stderr, outside the relay's JSON log) with `report`, and
 * leaves out the warnings known to be harmless.
 */
export function handleProcessWarnings(
  report: (warning: Error) => void,
  target: Pick<EventEmitter, 'on' | 'removeAllListeners'> = process,
): void {
  target.removeAllListeners('warning');
  target.on('warning', (warning: Error) => {
    if (!isKnownHarmlessWarning(warning)) report(warning);
  });
}
