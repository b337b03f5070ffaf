import type { RelayLogger } from '../core/ports.js';

/** For one-shot commands: they report in their own words, the library chatter would only confuse. */
export const SILENT_LOGGER: RelayLogger = {
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
};
