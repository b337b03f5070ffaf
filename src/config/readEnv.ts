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

/**
 * Reads WALBOX_* (and the conventional DATABASE_URL / KAFKA_BROKERS) into raw settings. The only place that
 * reads environment variables. Unknown WALBOX_* variables are errors, as unknown flags are: a typo must not be
 * ignored silently.
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
      settings[spec.key] = { value: direct, source: name };
    } else if (fromFile !== undefined) {
      settings[spec.key] = { value: readFile(fromFile).trim(), source: fileName };
    } else if (spec.fallbackEnv !== undefined) {
      const fallback = nonEmpty(env[spec.fallbackEnv]);
      if (fallback !== undefined) settings[spec.key] = { value: fallback, source: spec.fallbackEnv };
    }
  }
  const unknown = Object.keys(env).filter((name) => name.startsWith('WALBOX_') && !known.has(name));
  if (unknown.length > 0) {
    throw new ConfigError(
      `unknown environment variable ${unknown.join(', ')} (see walbox --help for the options)`,
    );
  }
  return settings;
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
