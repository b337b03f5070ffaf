import { ConfigError, PreconditionError } from '../errors.js';

/** The CLI's exit codes (walbox --help lists them). */
export const EXIT = {
  OK: 0,
  RUNTIME_FAILURE: 1,
  USAGE: 2,
  PRECONDITION: 3,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** Maps error classes, not messages, to exit codes. */
export function exitCodeFor(error: unknown): ExitCode {
  if (error instanceof ConfigError) return EXIT.USAGE;
  if (error instanceof PreconditionError) return EXIT.PRECONDITION;
  return EXIT.RUNTIME_FAILURE;
}
