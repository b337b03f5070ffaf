import { OPTION_SPECS } from '../config/configSchema.js';
import { BOOLEAN_WORDS, parseBoolean } from '../config/parseBoolean.js';
import { ConfigError } from '../errors.js';

/** Boolean options of the commands themselves; those of the configuration come from OPTION_SPECS. */
const COMMAND_BOOLEANS = [
  'all',
  'consumer',
  'drop-partitions',
  'include-dead-letters',
  'json',
  'notify-trigger',
  'print-sql',
  'dry-run',
];

const BOOLEAN_FLAGS = new Set([
  ...OPTION_SPECS.filter((spec) => spec.kind === 'boolean').map((spec) => spec.flag),
  ...COMMAND_BOOLEANS,
]);

/**
 * Rewrites what yargs would misread before it parses:
 * - `--create-topics=yes` (or `=1`, `=on`, `=off`): yargs reads any word but `true` as false, silently; the
 *   value is read as the environment variable would be, and a word that is no boolean is an error.
 * - `--startup-timeout -1s`: yargs takes `-1s` for the short options `-1` and `-s`; it is kept as the value,
 *   so that validation can say what is wrong with it.
 */
export function normalizeArgs(args: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] ?? '';
    if (arg === '--') {
      out.push(...args.slice(i));
      break;
    }
    const withValue = /^--([a-z0-9-]+)=(.*)$/s.exec(arg);
    if (withValue !== null) {
      const [, name = '', text = ''] = withValue;
      if (BOOLEAN_FLAGS.has(name)) {
        const value = parseBoolean(text);
        if (value === undefined) {
          throw new ConfigError(`invalid --${name} ${JSON.stringify(text)}: must be ${BOOLEAN_WORDS}`);
        }
        out.push(value ? `--${name}` : `--no-${name}`);
        continue;
      }
    }
    const next = args[i + 1];
    const flag = /^--([a-z0-9-]+)$/.exec(arg)?.[1];
    if (flag !== undefined && !BOOLEAN_FLAGS.has(flag) && next !== undefined && /^-\d/.test(next)) {
      out.push(`${arg}=${next}`);
      i++;
      continue;
    }
    out.push(arg);
  }
  return out;
}
