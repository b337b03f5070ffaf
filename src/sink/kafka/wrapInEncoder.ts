import Encoder from 'kafkajs/src/protocol/encoder';

/**
 * `bytes` as a kafkajs Encoder that has written `offset` of them, without copying: kafkajs reads an Encoder's
 * bytes through `buffer` (its `buf` up to `offset`). The smallest initial size spares the 512 zeroed bytes
 * kafkajs's constructor would otherwise allocate, only to be dropped.
 */
export function wrapInEncoder(bytes: Buffer, offset = bytes.length): Encoder {
  const encoder = new Encoder(0);
  encoder.buf = bytes;
  encoder.offset = offset;
  return encoder;
}
