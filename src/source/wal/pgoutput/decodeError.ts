import { WalboxError } from '../../../errors.js';

/**
 * Bytes from the replication stream that do not have the shape we expect. Never retriable: the server would
 * send the same bytes again, so the relay must stop rather than skip or guess.
 */
export class DecodeError extends WalboxError {
  constructor(message: string, options: { cause?: unknown } = {}) {
    super('DECODE_FAILED', message, { ...options, retriable: false });
  }
}
