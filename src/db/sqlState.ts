/** SQLSTATE codes walbox reacts to (https://www.postgresql.org/docs/current/errcodes-appendix.html). */
export const SQLSTATE = {
  /** 28P01: wrong password. */
  INVALID_PASSWORD: '28P01',
  /** 28000: no pg_hba.conf entry, role may not log in, … */
  INVALID_AUTHORIZATION: '28000',
  /** 3D000: the database in the URL does not exist. */
  INVALID_CATALOG_NAME: '3D000',
  /** 57P03: the server is starting up or shutting down: retry. */
  CANNOT_CONNECT_NOW: '57P03',
  /** 53300: too many connections: retry. */
  TOO_MANY_CONNECTIONS: '53300',
  /** 57P01: the backend was terminated by an administrator. */
  ADMIN_SHUTDOWN: '57P01',
  /** 42501: the role lacks a privilege. */
  INSUFFICIENT_PRIVILEGE: '42501',
  /** 42P01: a table does not exist. */
  UNDEFINED_TABLE: '42P01',
  /** 55000: object not in prerequisite state (e.g. an invalidated replication slot). */
  OBJECT_NOT_IN_PREREQUISITE_STATE: '55000',
  /** 55006: object in use (e.g. a replication slot held by another walsender). */
  OBJECT_IN_USE: '55006',
  /** 55P03: a lock was not granted within lock_timeout. */
  LOCK_NOT_AVAILABLE: '55P03',
  /** 40001: could not serialize access (e.g. FOR UPDATE under REPEATABLE READ after a concurrent update). */
  SERIALIZATION_FAILURE: '40001',
  /** 40P01: deadlock detected. */
  DEADLOCK_DETECTED: '40P01',
  /** 42710: duplicate object (e.g. a replication slot created by someone else in between). */
  DUPLICATE_OBJECT: '42710',
} as const;

/** Network-level failures worth retrying while we wait for the server. */
const RETRIABLE_NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EPIPE',
  'EAI_AGAIN',
]);

/** The `code` of a pg or Node error, if it has one. */
export function errorCodeOf(thrown: unknown): string | undefined {
  if (typeof thrown === 'object' && thrown !== null && 'code' in thrown) {
    const { code } = thrown;
    return typeof code === 'string' ? code : undefined;
  }
  return undefined;
}

/**
 * Refused logins and certificates. At startup connectDatabase reports them as configuration errors (exit 2) before
 * it asks isTransientConnectionError; once running, they are rotated credentials or certificates in flight, an
 * outage to retry visibly.
 */
/** Node's codes for a server certificate that does not verify (untrusted, expired, wrong host name). */
export const CERTIFICATE_ERROR_CODES: ReadonlySet<string> = new Set([
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'CERT_SIGNATURE_FAILURE',
  'CERT_UNTRUSTED',
  'ERR_TLS_CERT_ALTNAME_INVALID',
]);

const CREDENTIAL_CODES: ReadonlySet<string> = new Set([
  SQLSTATE.INVALID_PASSWORD,
  SQLSTATE.INVALID_AUTHORIZATION,
  ...CERTIFICATE_ERROR_CODES,
]);

/** True when waiting and reconnecting can fix the failure. */
export function isTransientConnectionError(thrown: unknown): boolean {
  const code = errorCodeOf(thrown);
  if (code === SQLSTATE.CANNOT_CONNECT_NOW || code === SQLSTATE.TOO_MANY_CONNECTIONS) return true;
  if (code === SQLSTATE.ADMIN_SHUTDOWN) return true;
  if (code !== undefined && CREDENTIAL_CODES.has(code)) return true;
  if (code !== undefined && RETRIABLE_NETWORK_CODES.has(code)) return true;
  const message = thrown instanceof Error ? thrown.message : '';
  // pg reports a connection timeout, a query unanswered within query_timeout (the pool then drops that client)
  // and a dropped socket without a code.
  return /timeout expired|Query read timeout|Connection terminated|connection terminated/i.test(message);
}

/** A transaction lost a race with another one: running it again is the fix. */
export function isTransactionConflict(thrown: unknown): boolean {
  const code = errorCodeOf(thrown);
  return code === SQLSTATE.SERIALIZATION_FAILURE || code === SQLSTATE.DEADLOCK_DETECTED;
}
