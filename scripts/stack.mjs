#!/usr/bin/env node
// npm run stack -- up|down|env|status: the local PostgreSQL + Kafka for people and the demo.
import { join } from 'node:path';

import { ROOT, readState, stackEnv, startStack, stopStack } from './stack/stack.mjs';

const STATE_DIR = process.env.STACK_STATE_DIR ?? join(ROOT, '.stack', 'dev');
const command = process.argv[2];

try {
  switch (command) {
    case 'up': {
      const state = await startStack({ stateDir: STATE_DIR });
      printEnv(state);
      break;
    }
    case 'down':
      await stopStack({ stateDir: STATE_DIR });
      break;
    case 'env': {
      const state = readState(STATE_DIR);
      if (state === undefined) fail('no stack is running: npm run stack -- up');
      printEnv(state);
      break;
    }
    case 'status': {
      const state = readState(STATE_DIR);
      console.log(state === undefined ? 'stack: down' : JSON.stringify(state, null, 2));
      break;
    }
    default:
      fail('usage: npm run stack -- up|down|env|status');
  }
} catch (error) {
  fail(error instanceof Error ? error.message : String(error));
}

function printEnv(state) {
  for (const [name, value] of Object.entries(stackEnv(state, STATE_DIR)))
    console.log(`export ${name}='${value}'`);
}

function fail(message) {
  console.error(`stack: ${message}`);
  process.exit(command === undefined ? 2 : 1);
}
