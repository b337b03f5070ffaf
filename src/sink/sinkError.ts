import { WalboxError, type WalboxErrorOptions } from '../errors.js';

/** The broker could not be reached or refused a request; `retriable` says whether waiting can help. */
export class SinkError extends WalboxError {
  constructor(message: string, options: WalboxErrorOptions = {}) {
    super(options.retriable === true ? 'SINK_UNAVAILABLE' : 'SINK_REJECTED', message, options);
  }
}
