import pino, { type Logger } from 'pino';

import type { LogFormat, LogLevel } from '../config/relayConfig.js';
import { formatPrettyLine } from './formatPrettyLine.js';

export type { Logger } from 'pino';

/** Censors a URL's password but keeps the rest readable; anything else secret becomes [Redacted]. */
function censor(value: unknown, path: string[]): string {
  const key = String(path.at(-1)).toLowerCase();
  if (typeof value === 'string' && key.includes('url')) {
    try {
      const url = new URL(value);
      if (url.password !== '') url.password = '***';
      return url.toString();
    } catch {
      return '[Redacted]';
    }
  }
  return '[Redacted]';
}

/**
 * The root logger: pino JSON on stdout. Secrets are redacted by key (pino never looks inside strings, so no
 * code path may put a URL or a password into a message text).
 */
export function createLogger(
  level: LogLevel,
  options: { readonly format?: LogFormat; readonly destination?: pino.DestinationStream } = {},
): Logger {
  const format = options.format ?? 'json';
  const pretty = format === 'pretty' || (format === 'auto' && process.stdout.isTTY);
  const out = options.destination ?? pino.destination(1);
  return pino(
    {
      level,
      base: { service: 'walbox' },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      redact: {
        paths: [
          'databaseUrl',
          'config.databaseUrl',
          'password',
          '*.password',
          'sasl',
          '*.sasl',
          'connectionString',
          '*.connectionString',
        ],
        censor,
      },
    },
    pretty ? { write: (line: string) => out.write(formatPrettyLine(line)) } : out,
  );
}
