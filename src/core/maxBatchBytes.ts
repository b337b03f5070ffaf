import type { OutboxRecord } from './outboxRecord.js';

/**
 * Payload and header bytes one batch may hold, in both modes (the first event always goes, however large): a
 * few large events must not take the heap, whatever --batch-size says.
 */
export const MAX_BATCH_BYTES = 16 * 1024 * 1024;

/** The bytes of an event that a batch bound counts: payload and headers text. */
export function countRecordBytes(record: Pick<OutboxRecord, 'payload' | 'headers'>): number {
  return (
    (record.payload === null ? 0 : Buffer.byteLength(record.payload)) +
    (record.headers === null ? 0 : Buffer.byteLength(record.headers))
  );
}
