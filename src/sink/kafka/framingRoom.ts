/**
 * Room left in front of a request's bytes for the frame kafkajs puts around them (size, api key and version,
 * correlation id, client id: 14 bytes and the client id's), so framing writes the frame in place instead of
 * copying the request. Enough for a client id of 240 bytes; a longer one is framed by copying.
 */
export const FRAMING_ROOM_BYTES = 256;

/** Request bytes with their room still free: each room is claimed once. */
const withRoom = new WeakSet<Buffer>();

/**
 * `size` bytes, uninitialised, with free room in front of them and `spareBehind` more behind them (for a writer
 * that reserves more than it writes, through a view of the same memory): the caller writes every byte.
 */
export function allocateWithFramingRoom(size: number, spareBehind = 0): Buffer {
  const bytes = Buffer.allocUnsafe(FRAMING_ROOM_BYTES + size + spareBehind).subarray(
    FRAMING_ROOM_BYTES,
    FRAMING_ROOM_BYTES + size,
  );
  withRoom.add(bytes);
  return bytes;
}

/**
 * The request `bytes` with `headerLength` bytes of their room in front, for the frame's header, or undefined
 * when they have no room left (not allocated here, already framed, or too long a header). A second framing of
 * the same bytes must not write over a frame that may still wait in the socket's queue: it copies instead.
 */
export function claimFramingRoom(bytes: Buffer, headerLength: number): Buffer | undefined {
  if (headerLength > FRAMING_ROOM_BYTES || !withRoom.delete(bytes)) return undefined;
  return Buffer.from(bytes.buffer, bytes.byteOffset - headerLength, headerLength + bytes.length);
}
