/** A WAL position. Always a bigint: LSN strings come padded and unpadded, so they never compare as text. */
export type Lsn = bigint;

const MAX_LSN = (1n << 64n) - 1n;
const LSN_TEXT = /^([0-9A-Fa-f]{1,8})\/([0-9A-Fa-f]{1,8})$/;

/** Reads `0/1533368` (as PostgreSQL prints it) or `00000000/01533368` (padded); throws on anything else. */
export function parseLsn(text: string): Lsn {
  const match = LSN_TEXT.exec(text);
  if (match?.[1] === undefined || match[2] === undefined)
    throw new Error(`not an LSN: ${JSON.stringify(text)}`);
  return (BigInt(`0x${match[1]}`) << 32n) | BigInt(`0x${match[2]}`);
}

/** Formats as PostgreSQL does (`16/B374D848`: upper case, unpadded), so logs match pg_replication_slots. */
export function formatLsn(lsn: Lsn): string {
  if (lsn < 0n || lsn > MAX_LSN) throw new RangeError(`LSN out of range: ${lsn}`);
  const high = (lsn >> 32n).toString(16).toUpperCase();
  const low = (lsn & 0xffff_ffffn).toString(16).toUpperCase();
  return `${high}/${low}`;
}

/** Negative, zero or positive, for Array.prototype.sort. */
export function compareLsn(a: Lsn, b: Lsn): number {
  if (a < b) return -1;
  return a > b ? 1 : 0;
}
