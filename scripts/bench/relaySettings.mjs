// How the relay runs in the bench: as the image runs it (the Dockerfile's Node major and NODE_OPTIONS) with the
// glibc setting the README's run commands export, so that the figures are the deployed relay's. Read by the
// launcher (which Node), the systems (how to start walbox) and the report (what it says it ran).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { ROOT } from '../stack/stack.mjs';

export function splitArgs(value) {
  return (value ?? '').split(' ').filter((a) => a.length > 0);
}

function readDockerfile() {
  return readFileSync(join(ROOT, 'Dockerfile'), 'utf8');
}

/** The Node major of the image's runtime stage (its last `FROM node:<major>`). */
export function readImageNodeMajor() {
  const major = [...readDockerfile().matchAll(/^FROM node:(\d+)/gm)].at(-1)?.[1];
  if (major === undefined)
    throw new Error('the Dockerfile has no `FROM node:<major>` for the bench to run on');
  return Number(major);
}

/**
 * The Node options the relay runs with: those the image sets (the Dockerfile's NODE_OPTIONS);
 * BENCH_WALBOX_NODE_ARGS replaces them ("" runs Node's defaults).
 */
export function readRelayNodeOptions() {
  if (process.env.BENCH_WALBOX_NODE_ARGS !== undefined) return splitArgs(process.env.BENCH_WALBOX_NODE_ARGS);
  const match = /^\s*NODE_OPTIONS="([^"]*)"/m.exec(readDockerfile());
  if (match === null)
    throw new Error('the Dockerfile sets no NODE_OPTIONS="…" for the bench to run the relay with');
  return splitArgs(match[1]);
}

/**
 * The environment the relay runs with beside the bench's own: glibc's fixed mmap threshold, as the README's run
 * commands export it (see docs/performance.md, "Large events"). BENCH_WALBOX_MALLOC=default leaves glibc's.
 */
export function readRelayEnv() {
  if (process.env.BENCH_WALBOX_MALLOC === 'default') return {};
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const match = /^export MALLOC_MMAP_THRESHOLD_=(\d+)/m.exec(readme);
  if (match === null)
    throw new Error('the README exports no MALLOC_MMAP_THRESHOLD_ for the bench to run the relay with');
  return { MALLOC_MMAP_THRESHOLD_: match[1] };
}
