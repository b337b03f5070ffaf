import { toError } from '../errors.js';
import { EXIT, exitCodeFor } from './exitCodeFor.js';

/**
 * Runs a command body and turns its outcome into an exit code. Errors are reported here, once, as one
 * readable line on stderr per problem, without a stack trace.
 */
export async function executeCommand(name: string, body: () => Promise<unknown>): Promise<void> {
  // A body stuck on a promise that can never settle lets the event loop drain: that must not pass for success
  // (a health check on `walbox status` would call a broken deployment healthy).
  process.exitCode = EXIT.RUNTIME_FAILURE;
  const unfinished = (): void => {
    process.stderr.write(
      `walbox ${name}: stopped before finishing (nothing left to wait for): please report this\n`,
    );
  };
  process.once('beforeExit', unfinished);
  try {
    const code = await body();
    process.exitCode = typeof code === 'number' ? code : 0;
  } catch (thrown) {
    const error = toError(thrown);
    // One line per problem (preflight reports every failed check).
    for (const line of error.message.split('\n')) process.stderr.write(`walbox ${name}: ${line}\n`);
    process.exitCode = exitCodeFor(thrown);
  } finally {
    process.removeListener('beforeExit', unfinished);
  }
}
