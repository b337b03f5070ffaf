#!/usr/bin/env node
// npm run bench: runs scripts/bench/bench.mjs (the relay, the bench's own clients and the Kafka client ceilings)
// on the Node.js major the image runs (the Dockerfile's `FROM node:<major>`), fetched from the npm registry on
// first use like the runtime matrix's, so that the figures are the deployed relay's rather than those of
// whichever Node runs npm. BENCH_NODE=current keeps the Node that runs npm; BENCH_WALBOX_NODE still names another
// binary for the relay alone.
import { spawn } from 'node:child_process';
import { join } from 'node:path';

import { fetchNode } from '../stack/nodeRuntime.mjs';
import { ROOT } from '../stack/stack.mjs';
import { readImageNodeMajor } from './relaySettings.mjs';

function findNode(major) {
  try {
    return fetchNode(major);
  } catch (error) {
    console.error(
      `bench: cannot fetch Node ${String(major)} from the npm registry (${error.message.split('\n')[0]}); ` +
        'BENCH_NODE=current runs the bench on the Node that runs npm',
    );
    process.exit(1);
  }
}

const current = Number(process.versions.node.split('.')[0]);
const major = readImageNodeMajor();
const node = process.env.BENCH_NODE === 'current' || major === current ? process.execPath : findNode(major);
const child = spawn(node, [join(ROOT, 'scripts', 'bench', 'bench.mjs'), ...process.argv.slice(2)], {
  stdio: 'inherit',
});
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal));
child.on('exit', (code) => process.exit(code ?? 1));
