import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';

import { cleanupCommand } from '../../../src/cli/commands/cleanupCommand.js';
import { dlqCommand } from '../../../src/cli/commands/dlqCommand.js';
import { doctorCommand } from '../../../src/cli/commands/doctorCommand.js';
import { migrateCommand } from '../../../src/cli/commands/migrateCommand.js';
import { runRelayCommand } from '../../../src/cli/commands/runRelayCommand.js';
import { slotCommand } from '../../../src/cli/commands/slotCommand.js';
import { statusCommand } from '../../../src/cli/commands/statusCommand.js';

const ROOT = join(__dirname, '..', '..', '..', '..');
const read = (path: string): string => readFileSync(join(ROOT, path), 'utf8');

describe('docs agree with the code', () => {
  it('docs/operations.md documents every operator command the CLI has', () => {
    const doc = read('docs/operations.md');
    for (const command of [statusCommand, doctorCommand, slotCommand, dlqCommand, cleanupCommand]) {
      const name = String(command.command).split(' ')[0] ?? '';
      assert.ok(doc.includes(`walbox ${name}`), `docs/operations.md does not mention walbox ${name}`);
    }
    for (const action of ['create', 'drop', 'info'])
      assert.match(doc, new RegExp(`slot [a-z|\\\\]*${action}`));
    for (const action of ['list', 'retry', 'purge'])
      assert.ok(doc.includes(`dlq ${action}`), `dlq ${action}`);
  });

  it("the README's commands exist: npm run demo, npm test, and the CLI commands it shows", () => {
    const readme = read('README.md');
    const scripts = (JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts;
    assert.match(readme, /npm ci && npm run demo/);
    assert.match(readme, /npm ci && npm test/);
    assert.ok(scripts['demo']?.includes('scripts/demo.mjs'));
    assert.ok(scripts['test']?.includes('scripts/test.mjs'));
    const known = [runRelayCommand, migrateCommand, statusCommand, doctorCommand].map(
      (c) => String(c.command).split(' ')[0],
    );
    for (const [, name] of readme.matchAll(/node dist\/cli\/main\.js (\w+)/g)) {
      assert.ok(known.includes(name), `README runs an unknown command ${String(name)}`);
    }
  });

  it('.ci/run runs exactly the README test command', () => {
    assert.match(read('.ci/run'), /^npm ci --no-audit --no-fund && npm test$/m);
  });

  it("the README's run commands export the image's NODE_OPTIONS, which the bench measures", () => {
    const image = /^\s*NODE_OPTIONS="([^"]+)"/m.exec(read('Dockerfile'))?.[1];
    const readme = /^export NODE_OPTIONS="([^"]+)"/m.exec(read('README.md'))?.[1];
    assert.ok(image !== undefined, 'the Dockerfile sets NODE_OPTIONS');
    assert.equal(readme, image);
  });
});
