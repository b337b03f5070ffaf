import Encoder from 'kafkajs/src/protocol/encoder';

/**
 * `bytes` as a kafkajs Encoder that has written them, without copying: kafkajs reads an Encoder's bytes through
 * `buffer` (its `buf` up to `offset`).
 */
export function wrapInEncoder(bytes: Buffer): Encoder {
  const encoder = new Encoder();
  encoder.buf = bytes;
  encoder.offset = bytes.length;
  return encoder;
}
