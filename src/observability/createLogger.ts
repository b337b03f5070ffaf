import pino, { type Logger } from 'pino';

import type { LogFormat, LogLevel } from '../config/relayConfig.js';
import { formatPrettyLine } from './formatPrettyLine.js';
import { redactLogFields } from './redactLogFields.js';
import { redactSecretsInText } from './redactSecretsInText.js';

export type { Logger } from 'pino';

/** The message pino would take from a log call without one: that of an error passed alone or as `err`. */
function errorMessageOf(first: unknown): string | undefined {
  if (first instanceof Error) return first.message;
  if (typeof first !== 'object' || first === null || 'msg' in first || !('err' in first)) return undefined;
  const { err } = first;
  return err instanceof Error ? err.message : undefined;
}

/**
 * The root logger: pino JSON on stdout. Secrets are censored on the way out, at any depth: values under
 * secret-named keys, URL passwords and `password=` parameters in any string, messages included (redactLogFields).
 * Errors are serialised there too (pino's err serializer, at any key), so pino's own err serializer is turned off.
 */
export function createLogger(
  level: LogLevel,
  options: { readonly format?: LogFormat; readonly destination?: pino.DestinationStream } = {},
): Logger {
  const format = options.format ?? 'json';
  const pretty = format === 'pretty' || (format === 'auto' && process.stdout.isTTY);
  const out = options.destination ?? pino.destination(1);
  const root = pino(
    {
      level,
      base: { service: 'walbox' },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: {
        level: (label) => ({ level: label }),
        bindings: redactLogFields,
        log: redactLogFields,
      },
      // redactLogFields has serialised errors already: pino's serializer would retype them as "Object".
      serializers: { err: (value: unknown) => value },
      hooks: {
        // The message and its format arguments. Without a message pino takes the error's (`logger.error(err)`,
        // `logger.error({ err })`): it is passed censored instead.
        logMethod(args: unknown[], method) {
          const [first, ...rest] = args;
          const texts = rest.map((arg) => (typeof arg === 'string' ? redactSecretsInText(arg) : arg));
          const message = texts.length === 0 ? errorMessageOf(first) : undefined;
          if (message !== undefined) texts.push(redactSecretsInText(message));
          const head = typeof first === 'string' ? redactSecretsInText(first) : first;
          method.apply(this, [head, ...texts] as Parameters<typeof method>);
        },
      },
    },
    pretty ? { write: (line: string) => out.write(formatPrettyLine(line)) } : out,
  );
  // pino applies formatters.bindings to the root's bindings only (children get an identity formatter), so child
  // bindings are censored here. Children inherit from their parent by prototype: this covers every descendant.
  const pinoChild: unknown = Reflect.get(Object.getPrototypeOf(root) as object, 'child');
  if (typeof pinoChild !== 'function') throw new TypeError('pino loggers have no child() to wrap');
  Object.defineProperty(root, 'child', {
    value: function child(
      this: Logger,
      bindings: pino.Bindings,
      childOptions?: pino.ChildLoggerOptions,
    ): unknown {
      return Reflect.apply(pinoChild, this, [redactLogFields(bindings), childOptions]);
    },
  });
  return root;
}
