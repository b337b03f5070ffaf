import pino from 'pino';

import { redactSecretsInText } from './redactSecretsInText.js';

/** Keys whose values are secrets, at any depth (`sasl` is kafkajs' whole SASL block, password included). */
const SECRET_KEY =
  /password|passwd|secret|token|sasl|authorization|connectionstring|credential|cookie|passphrase|private_?key|sslkey|api_?key/i;
/** ...except these, which only name or point at one: kafkaSaslUsername, kafkaSaslMechanism, *File paths. */
const PUBLIC_KEY = /(?:user|username|mechanism|file|path)$/i;
const CENSORED = '[Redacted]';
/** Deeper than pino prints anyway (depthLimit 5 per top-level field); below it nothing is walked, so nothing leaks. */
const MAX_DEPTH = 10;

function isSecretKey(key: string): boolean {
  return SECRET_KEY.test(key) && !PUBLIC_KEY.test(key);
}

function hasToJson(value: object): value is { toJSON(key?: string): unknown } {
  return typeof (value as { toJSON?: unknown }).toJSON === 'function';
}

function walk(value: unknown, key: string, depth: number, ancestors: Set<object>): unknown {
  if (value === undefined) return undefined;
  if (isSecretKey(key)) return CENSORED;
  if (typeof value === 'string') return redactSecretsInText(value);
  if (typeof value !== 'object' || value === null) return value;
  if (ancestors.has(value)) return '[Circular]';
  if (depth >= MAX_DEPTH) return Array.isArray(value) ? '[Array]' : '[Object]';
  // What JSON would print: an Error as pino's err serializer shows it (type, message and stack with their
  // causes, own fields), a Date or Buffer as its toJSON().
  let shown: object = value;
  if (value instanceof Error) shown = pino.stdSerializers.err(value);
  else if (hasToJson(value)) {
    const json = value.toJSON(key);
    if (typeof json !== 'object' || json === null) return walk(json, key, depth, ancestors);
    shown = json;
  }
  ancestors.add(value);
  try {
    if (Array.isArray(shown)) return shown.map((item, i) => walk(item, String(i), depth + 1, ancestors));
    const copy: Record<string, unknown> = {};
    for (const [name, field] of Object.entries(shown)) copy[name] = walk(field, name, depth + 1, ancestors);
    return copy;
  } catch {
    return '[Unreadable]'; // a getter threw: the log line must still be written
  } finally {
    ancestors.delete(value);
  }
}

/**
 * A log record's fields with every secret censored, at any depth (pino's own `redact` takes fixed paths and one
 * `*` level): values under secret-named keys become [Redacted] (except user names, mechanisms and file paths),
 * and strings anywhere lose URL passwords and `password=`-style parameters (redactSecretsInText), so a logged
 * database URL stays readable. Errors come out serialised as pino's err serializer does. Cycle-safe.
 */
export function redactLogFields(fields: Record<string, unknown>): Record<string, unknown> {
  return walk(fields, '', 0, new Set()) as Record<string, unknown>;
}
