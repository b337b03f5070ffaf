#!/usr/bin/env node
// npm run test:faults: every fault scenario (npm test runs a subset), then docs/fault-results.md from the results.
import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { ROOT } from './stack/stack.mjs';

const results = join(tmpdir(), `walbox-faults-${process.pid}.md`);
rmSync(results, { force: true });
for (const extra of ['broken', 'failover', 'takeover']) rmSync(`${results}.${extra}`, { force: true });
const run = spawnSync(process.execPath, [join(ROOT, 'scripts', 'test.mjs'), 'faults'], {
  cwd: ROOT,
  stdio: 'inherit',
  env: { ...process.env, FAULTS: 'all', FAULT_RESULTS: results },
});
const read = (file) => {
  try {
    return readFileSync(file, 'utf8').trim();
  } catch {
    return '';
  }
};
const rows = read(results);
// The proof that the checker can fail: a relay broken on purpose (test-only preload) must lose events.
const broken = read(`${results}.broken`);
// Primary failover on every supported PostgreSQL version (test/faults/failover.test.ts), with its timing.
const failover = read(`${results}.failover`);
// Two relays on one slot: how long the standby took to stream after the active one was killed.
const takeover = read(`${results}.takeover`);
const table = [
  '| scenario | mode | committed | lost | phantom | reordered | dups | peak lag | peak retained WAL |',
  '| --- | --- | --- | --- | --- | --- | --- | --- | --- |',
  rows,
].join('\n');
writeFileSync(
  join(ROOT, 'docs', 'fault-results.md'),
  `# Fault-injection results\n\nThe last full run of \`npm run test:faults\` (${new Date().toISOString().slice(0, 10)}, exit code ${run.status}).\n` +
    'Each scenario writes 4000 events from 4 writers on 200 aggregates (1–5 events per transaction, 10% rolled back,\n' +
    'some events rolled back to a savepoint) while the fault is injected, then an independent\n' +
    'consumer checks every topic. Duplicates are allowed only within guarantee G4 (the in-flight window per relay crash).\n\n' +
    `${table}\n` +
    (failover === ''
      ? ''
      : '\nPrimary failover (a synchronous physical standby promoted after `pg_ctl stop -m immediate` of the primary\n' +
        'under load; walbox and the writers reach the primary through a TCP proxy that is then moved), per version:\n\n' +
        `${failover
          .split('\n')
          .map((l) => `- ${l}`)
          .join('\n')}\n`) +
    (takeover === ''
      ? ''
      : '\nStandby relays (two relays on one slot; the active one killed with kill -9 under load):\n\n' +
        `${takeover
          .split('\n')
          .map((l) => `- ${l}`)
          .join('\n')}\n`) +
    (broken === ''
      ? ''
      : '\nThe checker can fail: the same "relay kill -9 while the broker is down" scenario with a relay broken on\n' +
        'purpose (a test-only preload makes it confirm the received LSN instead of the acked one) is caught:\n' +
        `${broken}.\n`),
);
console.log(table);
process.exit(run.status ?? 1);
