import { redactSecretsInText } from '../observability/redactSecretsInText.js';

const UNKNOWN_ARGUMENTS = /^Unknown arguments?: /;
const STRAY =
  'unexpected argument (value not shown: it may hold a secret); pass a database URL as --database-url or DATABASE_URL';

/** The option names as typed: `--foo-bar=1` → foo-bar, `--no-x` → no-x, `-ab` → ab, a, b. */
function typedOptionNames(args: readonly string[]): Set<string> {
  const names = new Set<string>();
  for (const arg of args) {
    if (!arg.startsWith('-') || arg === '--') continue;
    const name = arg.replace(/^--?/, '').split('=')[0] ?? '';
    names.add(name);
    if (!arg.startsWith('--')) for (const letter of name) names.add(letter);
  }
  return names;
}

function toKebabCase(name: string): string {
  return name.replace(/[A-Z]/g, (letter) => `-${letter.toLowerCase()}`);
}

/**
 * yargs' usage error, safe to print. Its "Unknown argument" names stray positionals by value, and a stray value
 * is often a database URL or a password typed where a flag was meant: those are not repeated, while unknown
 * option names still are. Whatever else yargs quotes (e.g. `Given: "…"` for a bad choice) loses URL passwords
 * and `password=` values.
 */
export function describeUsageError(message: string, args: readonly string[]): string {
  const unknown = UNKNOWN_ARGUMENTS.exec(message);
  if (unknown === null) return redactSecretsInText(message);
  const typed = typedOptionNames(args);
  // yargs lists the values joined by ", "; a value holding ", " splits into parts that are no option name either.
  // An unknown --foo-bar is listed twice, also as fooBar.
  const listed = message.slice(unknown[0].length).split(', ');
  const isOption = (item: string): boolean => typed.has(item) || typed.has(toKebabCase(item));
  if (listed.every(isOption)) return redactSecretsInText(message);
  const options = listed.filter(isOption);
  const parts: string[] = [];
  if (options.length > 0)
    parts.push(`Unknown argument${options.length > 1 ? 's' : ''}: ${options.join(', ')}`);
  parts.push(STRAY);
  return redactSecretsInText(parts.join('; '));
}
