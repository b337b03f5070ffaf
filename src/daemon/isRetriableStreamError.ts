import { SQLSTATE, errorCodeOf, isTransientConnectionError } from '../db/sqlState.js';
import { WalboxError } from '../errors.js';

/** Whether a failure of the replication stream (or of preparing the slot) is worth a reconnect. */
export function isRetriableStreamError(error: unknown): boolean {
  if (error instanceof WalboxError) return error.retriable;
  const code = errorCodeOf(error);
  // 55006: the slot is held by another walsender (a dying one, or the active relay while this one stands by);
  // 55000: it was invalidated (recreated on the next round); 42710: another relay created it a moment ago.
  if (
    code === SQLSTATE.OBJECT_IN_USE ||
    code === SQLSTATE.OBJECT_NOT_IN_PREREQUISITE_STATE ||
    code === SQLSTATE.DUPLICATE_OBJECT
  )
    return true;
  return (
    isTransientConnectionError(error) ||
    (error instanceof Error && /replication stream ended/.test(error.message))
  );
}
