import { toError } from '../errors.js';
import { exitCodeFor } from './exitCodeFor.js';

/**
 * Runs a command body and turns its outcome into an exit code. Errors are reported here, once, as one
 * readable line on stderr per problem, without a stack trace.
 */
export async function executeCommand(name: string, body: () => Promise<unknown>): Promise<void> {
  try {
    const code = await body();
    process.exitCode = typeof code === 'number' ? code : 0;
  } catch (thrown) {
    const error = toError(thrown);
    // One line per problem (preflight reports every failed check).
    for (const line of error.message.split('\n')) process.stderr.write(`walbox ${name}: ${line}\n`);
    process.exitCode = exitCodeFor(thrown);
  }
}
