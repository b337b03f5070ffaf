/** Stable machine-readable error codes; the CLI maps error classes (not codes) to exit codes. */
export type WalboxErrorCode =
  | 'CONFIG_INVALID'
  | 'PRECONDITION_FAILED'
  | 'DATABASE_UNAVAILABLE'
  | 'DATABASE_FAILED'
  | 'MIGRATION_FAILED'
  | 'SLOT_UNAVAILABLE'
  | 'REPLICATION_LOST'
  | 'DECODE_FAILED'
  | 'SINK_UNAVAILABLE'
  | 'SINK_REJECTED'
  | 'SINK_MISCONFIGURED'
  | 'SHUTDOWN_TIMEOUT'
  | 'INTERNAL';

export interface WalboxErrorOptions {
  cause?: unknown;
  retriable?: boolean;
}

/** The one base class: every error walbox raises on purpose is one of these. */
export class WalboxError extends Error {
  readonly code: WalboxErrorCode;
  readonly retriable: boolean;

  constructor(code: WalboxErrorCode, message: string, options: WalboxErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
    this.retriable = options.retriable ?? false;
  }
}

/** A bad flag, environment variable or value: the user must change the configuration (exit 2). */
export class ConfigError extends WalboxError {
  constructor(message: string, options: Omit<WalboxErrorOptions, 'retriable'> = {}) {
    super('CONFIG_INVALID', message, options);
  }
}

/** The environment is not ready: wal_level, privileges, a missing table or publication (exit 3). */
export class PreconditionError extends WalboxError {
  constructor(message: string, options: Omit<WalboxErrorOptions, 'retriable'> = {}) {
    super('PRECONDITION_FAILED', message, options);
  }
}

/** PostgreSQL could not be reached or a statement failed. */
export class DatabaseError extends WalboxError {}

/** Applying the schema failed. */
export class MigrationError extends WalboxError {
  constructor(message: string, options: Omit<WalboxErrorOptions, 'retriable'> = {}) {
    super('MIGRATION_FAILED', message, options);
  }
}

/** Coerces anything thrown into an Error, keeping the original as `cause` when it was not one. */
export function toError(thrown: unknown): Error {
  if (thrown instanceof Error) return thrown;
  return new Error(typeof thrown === 'string' ? thrown : `non-error thrown: ${String(thrown)}`, {
    cause: thrown,
  });
}

/** True only for errors that say themselves that a retry can succeed. */
export function isRetriable(thrown: unknown): boolean {
  return thrown instanceof WalboxError && thrown.retriable;
}

/**
 * What a retry log line shows of an error: its message and code, without the stack (a retried outage repeats
 * the same stack every backoff; it is logged at debug).
 */
export function summarizeError(thrown: unknown): { type: string; message: string; code?: string } {
  const error = toError(thrown);
  const code: unknown = (error as { code?: unknown }).code;
  return {
    type: error.name,
    message: error.message,
    ...(typeof code === 'string' || typeof code === 'number' ? { code: String(code) } : {}),
  };
}
