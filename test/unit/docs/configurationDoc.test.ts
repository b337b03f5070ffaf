import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';

import { renderOptionsTable } from '../../support/renderOptionsTable.js';

const ROOT = join(__dirname, '..', '..', '..', '..');

/** Table rows with their cells trimmed, so that Prettier's column padding does not matter. */
function tableRows(markdown: string): string[] {
  return markdown
    .split('\n')
    .filter((line) => line.startsWith('| `--'))
    .map((line) =>
      line
        .split(/(?<!\\)\|/)
        .map((cell) => cell.trim())
        .join('|'),
    );
}

describe('docs/configuration.md', () => {
  it('lists every option of the config schema with its environment variable and default', () => {
    const documented = tableRows(readFileSync(join(ROOT, 'docs', 'configuration.md'), 'utf8'));
    const expected = renderOptionsTable();
    assert.deepEqual(
      documented,
      tableRows(expected),
      `docs/configuration.md is out of date; regenerate its options table with\n` +
        `  node build/test/support/renderOptionsTable.js\n\n${expected}`,
    );
  });
});
