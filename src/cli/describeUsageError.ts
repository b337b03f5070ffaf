import { redactSecretsInText } from '../observability/redactSecretsInText.js';

const UNKNOWN_ARGUMENTS = /^Unknown arguments?: /;
const INVALID_CHOICE = /^Invalid values:\s*Argument: ([^,]+), Given: (.*), Choices: (.*)$/s;
const STRAY =
  'unexpected argument (value not shown: it may hold a secret); pass a database URL as --database-url or DATABASE_URL';

/** The option names as typed, each with its dashes: `--foo-bar=1` → foo-bar, `--no-x` → no-x, `-ab` → ab, a, b. */
function typedOptionNames(args: readonly string[]): Map<string, string> {
  const names = new Map<string, string>();
  for (const arg of args) {
    if (!arg.startsWith('-') || arg === '--') continue;
    const long = arg.startsWith('--');
    const name = arg.replace(/^--?/, '').split('=')[0] ?? '';
    names.set(name, long ? '--' : '-');
    if (!long) for (const letter of name) names.set(letter, '-');
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
  const choice = INVALID_CHOICE.exec(message);
  if (choice !== null) {
    // yargs: `Invalid values:\n  Argument: action, Given: "x", Choices: "list", "retry"`: one line, our style.
    const [, argument = '', given = '', choices = ''] = choice;
    return redactSecretsInText(`invalid ${argument} ${given}: must be one of ${choices.replace(/"/g, '')}`);
  }
  const unknown = UNKNOWN_ARGUMENTS.exec(message);
  if (unknown === null) return redactSecretsInText(message);
  const typed = typedOptionNames(args);
  // yargs lists the values joined by ", "; a value holding ", " splits into parts that are no option name either.
  // An unknown --foo-bar is listed twice, also as fooBar: named once, as typed.
  const listed = message.slice(unknown[0].length).split(', ');
  const isOption = (item: string): boolean => typed.has(item) || typed.has(toKebabCase(item));
  const options = [
    ...new Set(
      listed.filter(isOption).map((item) => {
        const name = typed.has(item) ? item : toKebabCase(item);
        return `${typed.get(name) ?? '--'}${name}`;
      }),
    ),
  ];
  if (listed.every(isOption)) {
    return redactSecretsInText(`Unknown argument${options.length > 1 ? 's' : ''}: ${options.join(', ')}`);
  }
  const parts: string[] = [];
  if (options.length > 0)
    parts.push(`Unknown argument${options.length > 1 ? 's' : ''}: ${options.join(', ')}`);
  parts.push(STRAY);
  return redactSecretsInText(parts.join('; '));
}
