import type { EventEmitter } from 'node:events';

/**
 * Replaces Node's own warning printer (plain text on stderr, outside the relay's JSON log) with `report`.
 * kafkajs's negative timer delay, which Node 24 warns about (kafkajs issue 1751), is gone with the timer itself
 * (sink/kafka/stopRequestQueueSpin), so every warning that arrives here is worth a line.
 */
export function handleProcessWarnings(
  report: (warning: Error) => void,
  target: Pick<EventEmitter, 'on' | 'removeAllListeners'> = process,
): void {
  target.removeAllListeners('warning');
  target.on('warning', report);
}
