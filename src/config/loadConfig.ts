import { ConfigError } from '../errors.js';
import { OPTION_SPECS, toEnvName, type OptionSpec } from './configSchema.js';
import { parseOptionValue } from './parseOptionValue.js';
import { readEnv, type Environment, type RawSettings } from './readEnv.js';
import type { RelayConfig } from './relayConfig.js';

export interface LoadConfigInput {
  /** Values given as flags, keyed by config key; undefined means "not given". */
  readonly flags?: Partial<Record<keyof RelayConfig, string | boolean | undefined>>;
  readonly env?: Environment;
  /** Keys the command cannot work without. */
  readonly required?: readonly (keyof RelayConfig)[];
  readonly readFile?: (path: string) => string;
}

/**
 * Builds the one frozen RelayConfig: defaults < environment < flags, every value validated once. Throws a
 * ConfigError naming every bad setting (and where it came from) in one line.
 */
export function loadConfig(input: LoadConfigInput = {}): RelayConfig {
  const fromEnv: RawSettings = readEnv(input.env ?? {}, input.readFile);
  const values: Record<string, unknown> = {};
  const problems: string[] = [];
  for (const spec of OPTION_SPECS) {
    const flag = input.flags?.[spec.key];
    const raw = flag !== undefined ? { value: flag, source: `--${spec.flag}` } : fromEnv[spec.key];
    if (raw === undefined) {
      values[spec.key] = spec.default;
      continue;
    }
    const parsed = parseOptionValue(spec, raw.value);
    if (parsed.ok) {
      values[spec.key] = parsed.value;
    } else {
      problems.push(describeProblem(spec, raw.value, raw.source, parsed.reason));
    }
  }
  for (const key of input.required ?? []) {
    if (values[key] === undefined || (Array.isArray(values[key]) && values[key].length === 0)) {
      const spec = OPTION_SPECS.find((s) => s.key === key);
      if (spec !== undefined) problems.push(describeMissing(spec));
    }
  }
  if (problems.length > 0) throw new ConfigError(problems.join('; '));
  checkCombinations(values, problems);
  if (problems.length > 0) throw new ConfigError(problems.join('; '));
  // Every key of RelayConfig has a spec (a unit test checks it), so the object is complete here.
  return Object.freeze(values) as unknown as RelayConfig;
}

function describeProblem(spec: OptionSpec, value: string | boolean, source: string, reason: string): string {
  const shown = spec.secret === true ? '' : ` ${JSON.stringify(String(value))}`;
  const from = source === `--${spec.flag}` ? `--${spec.flag}` : `--${spec.flag} (from ${source})`;
  return `invalid ${from}${shown}: ${reason}`;
}

function describeMissing(spec: OptionSpec): string {
  const env = [toEnvName(spec.flag), spec.fallbackEnv].filter((n) => n !== undefined).join(' or ');
  return `missing --${spec.flag}: set the flag or ${env}`;
}

function checkCombinations(values: Record<string, unknown>, problems: string[]): void {
  const initial = values['retryBackoffInitialMs'];
  const max = values['retryBackoffMaxMs'];
  if (typeof initial === 'number' && typeof max === 'number' && initial > max) {
    problems.push('--retry-backoff-initial must not exceed --retry-backoff-max');
  }
}
