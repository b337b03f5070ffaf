import type { Argv, Options } from 'yargs';

import { OPTION_SPECS, toEnvName, type CommandName, type OptionSpec } from '../config/configSchema.js';
import { ConfigError } from '../errors.js';
import { formatDuration } from '../config/parseDuration.js';
import { loadConfig } from '../config/loadConfig.js';
import type { RelayConfig } from '../config/relayConfig.js';

/**
 * Registers the config options a command accepts. yargs gets no defaults and no types beyond string/boolean:
 * loadConfig() owns precedence (defaults < env < flags) and validation, so an unset flag never hides an
 * environment variable and a bad number is never silently NaN.
 */
export function addConfigOptions<T>(yargs: Argv<T>, command: CommandName): Argv<T> {
  let result = yargs;
  for (const spec of OPTION_SPECS) {
    if (!spec.commands.includes(command)) continue;
    // No yargs `choices`: its "Invalid values" error is two lines in another style; loadConfig says it in one.
    const option: Options = {
      type: spec.kind === 'boolean' ? 'boolean' : 'string',
      description: describeOption(spec),
      group: 'Options (also read from the environment):',
    };
    result = result.option(spec.flag, option);
  }
  return result;
}

/** The flags that were actually given, keyed by config key. */
export function readConfigFlags(
  argv: Readonly<Record<string, unknown>>,
  command: CommandName,
): Partial<Record<keyof RelayConfig, string | boolean>> {
  const flags: Partial<Record<keyof RelayConfig, string | boolean>> = {};
  for (const spec of OPTION_SPECS) {
    if (!spec.commands.includes(command)) continue;
    const value = argv[spec.flag];
    if (value === undefined) continue;
    if (spec.envOnly === true) {
      // Never echo the value: it is a secret that should not have been on the command line at all.
      throw new ConfigError(
        `--${spec.flag} is not accepted on the command line (other users of the host can read it): ` +
          `set ${toEnvName(spec.flag)} or ${toEnvName(spec.flag)}_FILE`,
      );
    }
    if (Array.isArray(value)) {
      // --flag a --flag b: the last one wins, as with most CLIs.
      const last: unknown = value.at(-1);
      if (typeof last === 'string' || typeof last === 'boolean') flags[spec.key] = last;
    } else if (typeof value === 'string' || typeof value === 'boolean') {
      flags[spec.key] = value;
    }
  }
  return flags;
}

export function describeOption(spec: OptionSpec): string {
  const env = [toEnvName(spec.flag), spec.fallbackEnv].filter((n) => n !== undefined).join(', ');
  const shownDefault = formatDefault(spec);
  const choices = spec.choices === undefined ? '' : ` [choices: ${spec.choices.join(', ')}]`;
  return `${spec.description}${choices} [env ${env}]${shownDefault === undefined ? '' : ` [default ${shownDefault}]`}`;
}

export function formatDefault(spec: OptionSpec): string | undefined {
  const value = spec.default;
  if (value === undefined) return undefined;
  if (spec.kind === 'duration' && typeof value === 'number') return formatDuration(value);
  if (Array.isArray(value)) {
    const items = value.filter((v): v is string => typeof v === 'string');
    return items.length === 0 ? undefined : items.join(',');
  }
  return typeof value === 'object' ? undefined : String(value);
}

/** The command's config from its flags and the environment (defaults < env < flags), with `required` set. */
export function loadCommandConfig(
  argv: Readonly<Record<string, unknown>>,
  command: CommandName,
  required: readonly (keyof RelayConfig)[] = ['databaseUrl'],
): RelayConfig {
  return loadConfig({ flags: readConfigFlags(argv, command), env: process.env, required });
}
