import { readFileSync } from 'node:fs';

import { ConfigError } from '../errors.js';
import { OPTION_SPECS, toEnvName } from './configSchema.js';
import type { RelayConfig } from './relayConfig.js';

export type Environment = Readonly<Record<string, string | undefined>>;

/** A raw setting and where it came from, so that errors can name the variable to fix. */
export interface RawSetting {
  readonly value: string | boolean;
  readonly source: string;
}

export type RawSettings = Partial<Record<keyof RelayConfig, RawSetting>>;

// Kubernetes gives a pod, for every Service of its namespace, variables named after the Service (unless the pod
// sets enableServiceLinks: false). A Service named walbox or walbox-<x> yields WALBOX_[<X>_]SERVICE_HOST,
// …_SERVICE_PORT[_<PORT_NAME>], …_PORT=tcp://ip:port and …_PORT_<n>_<TCP|UDP|SCTP>[_PROTO|_PORT|_ADDR]: not
// options, and they must not stop walbox from starting. Any other unknown WALBOX_* is a typo.

/** Names only a service link has: no option variable ends like this. */
const SERVICE_LINK_NAME =
  /^WALBOX(?:_[A-Z0-9_]+)?_(?:SERVICE_HOST|SERVICE_PORT(?:_[A-Z0-9_]+)?|PORT_\d+_(?:TCP|UDP|SCTP)(?:_(?:PROTO|PORT|ADDR))?)$/;
/** WALBOX[_<X>]_PORT is a service link by its value only: WALBOX_METRICS_PORT is also an option. */
const SERVICE_LINK_PORT_NAME = /^WALBOX(?:_[A-Z0-9_]+)?_PORT$/;
const SERVICE_LINK_PORT_VALUE = /^(?:tcp|udp|sctp):\/\/[0-9A-Za-z.:[\]-]+:\d+$/;

/**
 * Reads WALBOX_* (and the conventional DATABASE_URL / KAFKA_BROKERS) into raw settings. The only place that
 * reads environment variables. Unknown WALBOX_* variables are errors, as unknown flags are: a typo must not be
 * ignored silently. Kubernetes service-link variables are not options and are skipped.
 */
export function readEnv(env: Environment, readFile: (path: string) => string = readSecretFile): RawSettings {
  const settings: RawSettings = {};
  const known = new Set<string>();
  for (const spec of OPTION_SPECS) {
    const name = toEnvName(spec.flag);
    known.add(name);
    const fileName = `${name}_FILE`;
    if (spec.secret === true) known.add(fileName);
    const direct = nonEmpty(env[name]);
    const fromFile = spec.secret === true ? nonEmpty(env[fileName]) : undefined;
    if (direct !== undefined && fromFile !== undefined) {
      throw new ConfigError(`both ${name} and ${fileName} are set: keep one`);
    }
    if (direct !== undefined) {
      rejectServiceLink(name, direct, spec.flag);
      settings[spec.key] = { value: direct, source: name };
    } else if (fromFile !== undefined) {
      settings[spec.key] = { value: readFile(fromFile).trim(), source: fileName };
    } else if (spec.fallbackEnv !== undefined) {
      const fallback = nonEmpty(env[spec.fallbackEnv]);
      if (fallback !== undefined) settings[spec.key] = { value: fallback, source: spec.fallbackEnv };
    }
  }
  const unknown = Object.keys(env).filter(
    (name) => name.startsWith('WALBOX_') && !known.has(name) && !looksLikeServiceLink(name, env[name] ?? ''),
  );
  if (unknown.length > 0) {
    throw new ConfigError(
      `unknown environment variable ${unknown.join(', ')} (see walbox --help for the options)`,
    );
  }
  return settings;
}

function looksLikeServiceLink(name: string, value: string): boolean {
  return (
    SERVICE_LINK_NAME.test(name) || (SERVICE_LINK_PORT_NAME.test(name) && SERVICE_LINK_PORT_VALUE.test(value))
  );
}

/**
 * An option variable holding a service link (WALBOX_METRICS_PORT=tcp://… from a Service walbox-metrics) was not
 * set by the operator: the container's own env would have won over it.
 */
function rejectServiceLink(name: string, value: string, flag: string): void {
  if (!looksLikeServiceLink(name, value)) return;
  const service = name
    .replace(/_PORT$/, '')
    .toLowerCase()
    .replace(/_/g, '-');
  throw new ConfigError(
    `${name}=${value} looks like a Kubernetes service-link variable of a Service named ${service}, not --${flag}: ` +
      `rename the Service, set enableServiceLinks: false in the pod spec, or set ${name} in the container's env`,
  );
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === '' ? undefined : value;
}

function readSecretFile(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (cause) {
    throw new ConfigError(`cannot read secret file ${path}: ${(cause as Error).message}`, { cause });
  }
}
