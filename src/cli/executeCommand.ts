import { toError } from '../errors.js';
import { exitCodeFor } from './exitCodeFor.js';

/**
 * Runs a command body and turns its outcome into an exit code. Errors are reported here, once, as one
 * readable line on stderr (never with a stack unless WALBOX_DEBUG_STACK is set by a developer).
 */
export async function executeCommand(name: string, body: () => Promise<unknown>): Promise<void> {
  try {
    const code = await body();
    process.exitCode = typeof code === 'number' ? code : 0;
  } catch (thrown) {
    const error = toError(thrown);
    process.stderr.write(`walbox ${name}: ${error.message}\n`);
    process.exitCode = exitCodeFor(thrown);
  }
}
