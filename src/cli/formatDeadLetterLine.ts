import type { DeadLetter } from '../db/deadLetters.js';
import { escapeControlChars } from '../observability/escapeControlChars.js';

/**
 * One dead letter as `walbox dlq list` prints it. Aggregate, event type and last error come from rows and
 * broker answers, so their control characters are escaped: a row cannot send escape sequences to the operator's
 * terminal, nor fake a line of its own.
 */
export function formatDeadLetterLine(letter: DeadLetter): string {
  const fields = [
    letter.id,
    letter.deadLetteredAt,
    `${letter.aggregateType}/${letter.aggregateId}`,
    letter.eventType,
    `attempts=${String(letter.attempts)}`,
    letter.lastError ?? '',
  ];
  return `${escapeControlChars(fields.join('  '))}\n`;
}
