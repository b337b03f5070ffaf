import { OPTION_SPECS, toEnvName } from '../../src/config/configSchema.js';
import { formatDefault } from '../../src/cli/configOptions.js';

/** The options table of docs/configuration.md, rendered from the config schema. */
export function renderOptionsTable(): string {
  const rows = OPTION_SPECS.map((spec) => {
    const env = [toEnvName(spec.flag), spec.fallbackEnv]
      .filter((n) => n !== undefined)
      .map((n) => `\`${n}\``);
    if (spec.secret === true) env.push(`\`${toEnvName(spec.flag)}_FILE\``);
    const shown = formatDefault(spec);
    const values = spec.choices === undefined ? '' : ` (${spec.choices.join(' \\| ')})`;
    return `| \`--${spec.flag}\` | ${env.join(', ')} | ${shown === undefined ? '—' : `\`${shown}\``} | ${spec.description}${values} |`;
  });
  return ['| flag | environment | default | meaning |', '| --- | --- | --- | --- |', ...rows].join('\n');
}

if (require.main === module) process.stdout.write(`${renderOptionsTable()}\n`);
