/** PostgreSQL truncates identifiers longer than NAMEDATALEN - 1 bytes; we refuse them instead. */
const MAX_IDENTIFIER_BYTES = 63;

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** Replication slot names are stricter than identifiers (ReplicationSlotValidateName). */
const SLOT_NAME = /^[a-z0-9_]+$/;

/**
 * Returns why `value` is not an acceptable SQL identifier, or undefined when it is. Identifiers from config are
 * validated here and, separately, always quoted where they meet SQL: validation keeps names portable and
 * readable in logs, quoting keeps SQL correct whatever slips through.
 */
export function explainBadIdentifier(value: string, maxBytes = MAX_IDENTIFIER_BYTES): string | undefined {
  if (!IDENTIFIER.test(value)) {
    return 'must start with a letter or underscore and contain only letters, digits and underscores';
  }
  if (Buffer.byteLength(value) > maxBytes) return `must be at most ${maxBytes} characters`;
  return undefined;
}

export function explainBadSlotName(value: string): string | undefined {
  if (!SLOT_NAME.test(value)) return 'must contain only lower-case letters, digits and underscores';
  if (value.length > MAX_IDENTIFIER_BYTES) return `must be at most ${MAX_IDENTIFIER_BYTES} characters`;
  return undefined;
}
