import Encoder from 'kafkajs/src/protocol/encoder';
import type { RequestFrameArgs } from 'kafkajs/src/protocol/request';

import { claimFramingRoom } from './framingRoom.js';
import { replaceKafkajsModule, type KafkajsPatch } from './replaceKafkajsModule.js';
import { wrapInEncoder } from './wrapInEncoder.js';

const REQUEST = 'kafkajs/src/protocol/request';
/** kafkajs's connection keeps the framing function it finds when it loads. */
const LOADED_BY = ['kafkajs/src/network/connection'];

/**
 * kafkajs 2.2.4's request framing (size, api key and version, correlation id, client id, then the request's own
 * bytes), with no copy of a produce request's bytes and one of any other request's, instead of two: kafkajs
 * copies them into an encoder for the header and that into another for the size, each grown to the next power
 * of two, which for a produce request of 8 KB events is a megabyte of short-lived memory outside the heap, twice
 * per request. A produce request is written with room in front for the frame (framingRoom). The bytes are
 * kafkajs's (the unit test compares them), and a request whose encoding is not an Encoder fails with kafkajs's
 * error.
 */
export async function frameRequest({
  correlationId,
  clientId,
  request: { apiKey, apiVersion, encode },
}: RequestFrameArgs): Promise<Encoder> {
  const payload = await encode();
  const header = new Encoder()
    .writeInt32(0)
    .writeInt16(apiKey)
    .writeInt16(apiVersion)
    .writeInt32(correlationId)
    .writeString(clientId);
  if (!isEncoder(payload)) throw new Error('value should be an instance of Encoder');
  const size = header.offset + payload.offset;
  const framed =
    (payload.offset === payload.buf.length ? claimFramingRoom(payload.buf, header.offset) : undefined) ??
    copyBehindHeader(payload, size);
  header.buf.copy(framed, 0, 0, header.offset);
  framed.writeInt32BE(size - 4, 0);
  return wrapInEncoder(framed);
}

/** A new buffer of the frame's size with the request's bytes at its end: the header is written after. */
function copyBehindHeader(payload: Encoder, size: number): Buffer {
  const framed = Buffer.allocUnsafe(size);
  payload.buf.copy(framed, size - payload.offset, 0, payload.offset);
  return framed;
}

/** kafkajs's writeEncoder's check, whose message frameRequest throws as kafkajs does. */
function isEncoder(value: unknown): value is Encoder {
  return value != null && Buffer.isBuffer((value as { buf?: unknown }).buf);
}

/** Puts frameRequest in the place of kafkajs's framing, before kafkajs's connection loads and keeps its own. */
export function speedUpRequestFraming(): KafkajsPatch {
  return replaceKafkajsModule(REQUEST, LOADED_BY, () => frameRequest);
}
