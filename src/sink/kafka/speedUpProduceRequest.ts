import Encoder from 'kafkajs/src/protocol/encoder';
import { Types as CompressionTypes } from 'kafkajs/src/protocol/message/compression';
import kafkajsRecord, { type RecordArgs } from 'kafkajs/src/protocol/recordBatch/record/v0';
import { RecordBatch } from 'kafkajs/src/protocol/recordBatch/v0';
import apiKeys from 'kafkajs/src/protocol/requests/apiKeys';
import type {
  ProduceMessage,
  ProducePartitionData,
  ProduceRequest,
  ProduceRequestArgs,
} from 'kafkajs/src/protocol/requests/produce/v3/request';
import Long from 'kafkajs/src/utils/long';

import { crc32c } from './crc32c.js';
import {
  createRecordEncoder,
  measureRecord,
  RECORD_SPARE_BYTES,
  writeRecord,
  type MeasuredRecord,
} from './createRecordEncoder.js';
import { allocateWithFramingRoom } from './framingRoom.js';
import { replaceKafkajsModule, type KafkajsPatch } from './replaceKafkajsModule.js';
import { wrapInEncoder } from './wrapInEncoder.js';

const PRODUCE_V3 = 'kafkajs/src/protocol/requests/produce/v3/request';
/** The newer produce requests keep v3's function when they load (v6 and v7 load v5). */
const LOADED_BY = [
  'kafkajs/src/protocol/requests/produce/v4/request',
  'kafkajs/src/protocol/requests/produce/v5/request',
];

const encodeRecord = createRecordEncoder(kafkajsRecord);

/** kafkajs's record batch framing (v2 format), as its RecordBatch writes it. */
const MAGIC_BYTE = 2;
const TRANSACTIONAL_ATTRIBUTE = 16;
/** partitionLeaderEpoch (int32), magic (int8), crc (uint32): the batch's bytes before those the crc covers. */
const BATCH_PREFIX_BYTES = 4 + 1 + 4;
/** firstOffset (int64) and the batch's length (int32) before the batch. */
const RECORD_BATCH_PREFIX_BYTES = 8 + 4;

/**
 * kafkajs 2.2.4's produce request v3 (which v4–v7, the versions current brokers negotiate, wrap), step for step,
 * but for how records are made and how the bytes are put together. kafkajs passes every message to its record
 * encoder as `{ ...message, offsetDelta, timestampDelta }`, and Node 20's V8 builds an object literal that
 * spreads one object and adds properties on a slow path: about 2 µs per record, a third of what the encoding
 * costs (Node 24 does it in 0.1). Here the record's fields are passed by name (kafkajs's record encoder reads no
 * others). kafkajs then copies each record into its batch, the batch into three more encoders and those into
 * the topic's and the request's, each a buffer grown to the next power of two: about seven times a request's
 * bytes in short-lived buffers outside the heap, which on 8 KB events is what the relay's peak memory is made
 * of. Here an uncompressed request is written in one buffer of its exact size, with room in front for its frame
 * (framingRoom): each record is measured first and then written straight into it (createRecordEncoder), so a
 * value is copied once, from the event into the request, and each batch's checksum is computed eight bytes at a
 * time (crc32c). Compressed batches are kafkajs's RecordBatch, of records encoded one by one.
 * Timestamps, compression and every field are kafkajs's own code or the same steps, and the bytes are kafkajs's
 * (the unit test compares them).
 */
export function createProduceRequest(args: ProduceRequestArgs): ProduceRequest {
  return {
    apiKey: apiKeys.Produce,
    apiVersion: 3,
    apiName: 'Produce',
    expectResponse: () => args.acks !== 0,
    encode: async () => {
      const inPlace = (await collectRequest(args, 'in place')).toEncoder();
      if (inPlace !== undefined) return inPlace;
      // A record came out at another size than measured (writeRecord's check): the request is made again with
      // each record encoded apart, by kafkajs's encoder where walbox's would not match, and copied in.
      const apart = (await collectRequest(args, 'apart')).toEncoder();
      if (apart === undefined)
        throw new Error('A produce request of records encoded apart failed to assemble');
      return apart;
    },
  };
}

/**
 * Puts createProduceRequest in the place of kafkajs's produce request v3, before the newer versions load and keep
 * the one they find (replaceKafkajsModule says when that is too late).
 */
export function speedUpProduceRequest(): KafkajsPatch {
  return replaceKafkajsModule(PRODUCE_V3, LOADED_BY, () => createProduceRequest);
}

/** Where records go: written straight into the request's buffer, or each encoded apart and copied in. */
type RecordPlacement = 'in place' | 'apart';

/** kafkajs's produce request v3 fields, in its order. */
async function collectRequest(
  {
    acks,
    timeout,
    transactionalId = null,
    producerId = Long.fromInt(-1),
    producerEpoch = 0,
    compression = CompressionTypes.None,
    topicData,
  }: ProduceRequestArgs,
  placement: RecordPlacement,
): Promise<RequestBytes> {
  const request = new RequestBytes();
  request.add(
    new Encoder()
      .writeString(transactionalId)
      .writeInt16(acks)
      .writeInt32(timeout)
      .writeInt32(topicData.length).buffer,
  );
  for (const { topic, partitions } of topicData) {
    request.add(new Encoder().writeString(topic).writeInt32(partitions.length).buffer);
    for (const data of partitions) {
      const batch = { compression, transactionalId, producerId, producerEpoch };
      await addPartition(request, data, batch, placement);
    }
  }
  return request;
}

/**
 * A request's parts (bytes, and records measured to be written in place), put together once in a buffer of the
 * request's size, with the batches' checksums written after.
 */
class RequestBytes {
  private readonly parts: (Buffer | MeasuredRecord)[] = [];
  private size = 0;
  /** Where each batch's crc goes, and the bytes it covers. */
  private readonly checksums: { at: number; start: number; end: number }[] = [];

  add(part: Buffer | MeasuredRecord): void {
    this.parts.push(part);
    this.size += Buffer.isBuffer(part) ? part.length : part.size;
  }

  /** The bytes added next, `length` of them, are a batch whose crc is the last four bytes added before them. */
  checksumNext(length: number): void {
    this.checksums.push({ at: this.size - 4, start: this.size, end: this.size + length });
  }

  /**
   * With room in front for the frame (allocateWithFramingRoom): framing then copies nothing. Undefined when a
   * record did not come out at its measured size.
   */
  toEncoder(): Encoder | undefined {
    const bytes = allocateWithFramingRoom(this.size, RECORD_SPARE_BYTES);
    const writer = wrapInEncoder(
      Buffer.from(bytes.buffer, bytes.byteOffset, this.size + RECORD_SPARE_BYTES),
      0,
    );
    for (const part of this.parts) {
      if (!Buffer.isBuffer(part)) {
        if (!writeRecord(part, writer)) return undefined;
      } else writer.offset += part.copy(writer.buf, writer.offset);
    }
    if (writer.offset !== this.size) return undefined;
    for (const { at, start, end } of this.checksums)
      bytes.writeUInt32BE(crc32c(bytes.subarray(start, end)), at);
    return wrapInEncoder(bytes);
  }
}

/** What a partition's batch takes from the request besides its records. */
interface BatchFields {
  compression: number;
  transactionalId: string | null;
  producerId: unknown;
  producerEpoch: number;
}

/** One partition's records as kafkajs's produce request v3 and RecordBatch v0 write them. */
async function addPartition(
  request: RequestBytes,
  { partition, messages, firstSequence = 0 }: ProducePartitionData,
  { compression, transactionalId, producerId, producerEpoch }: BatchFields,
  placement: RecordPlacement,
): Promise<void> {
  const dateNow = Date.now();
  // As kafkajs: the default sort, which compares timestamps as strings.
  const messageTimestamps = messages
    .map((m) => m.timestamp)
    .filter((timestamp) => timestamp != null)
    .sort();
  const timestamps = messageTimestamps.length === 0 ? [dateNow] : messageTimestamps;
  const firstTimestamp = timestamps[0];
  const maxTimestamp = timestamps[timestamps.length - 1];
  const recordArgs = messages.map((message: ProduceMessage, i): RecordArgs => ({
    key: message.key,
    value: message.value,
    headers: message.headers,
    offsetDelta: i,
    // `||`, as kafkajs: a zero or empty timestamp takes the send time here (not in the batch's first and max).
    timestampDelta: subtract(message.timestamp || dateNow, firstTimestamp),
  }));
  if (compression !== CompressionTypes.None) {
    const recordBatch = await RecordBatch({
      compression,
      records: recordArgs.map(encodeRecord),
      firstTimestamp,
      maxTimestamp,
      producerId,
      producerEpoch,
      firstSequence,
      transactional: !!transactionalId,
      lastOffsetDelta: recordArgs.length - 1,
    });
    request.add(
      new Encoder().writeInt32(partition).writeInt32(recordBatch.size()).writeEncoder(recordBatch).buffer,
    );
    return;
  }
  // In kafkajs's order: a record it would refuse throws here, before any is written.
  const records = recordArgs.map((args) =>
    placement === 'in place' ? (measureRecord(args) ?? encodeRecord(args).buffer) : encodeRecord(args).buffer,
  );
  // RecordBatch's fields in its order; the record count is where its writeArray puts it.
  const header = new Encoder()
    .writeInt16(transactionalId ? TRANSACTIONAL_ATTRIBUTE : 0)
    .writeInt32(records.length - 1)
    .writeInt64(firstTimestamp)
    .writeInt64(maxTimestamp)
    .writeInt64(producerId)
    .writeInt16(producerEpoch)
    .writeInt32(firstSequence)
    .writeInt32(records.length);
  let checkedLength = header.offset;
  for (const record of records) checkedLength += Buffer.isBuffer(record) ? record.length : record.size;
  const batchLength = BATCH_PREFIX_BYTES + checkedLength;
  request.add(
    new Encoder()
      .writeInt32(partition)
      .writeInt32(RECORD_BATCH_PREFIX_BYTES + batchLength)
      .writeInt64(Long.fromInt(0))
      .writeInt32(batchLength)
      .writeInt32(0)
      .writeInt8(MAGIC_BYTE)
      .writeUInt32(0).buffer,
  );
  request.checksumNext(checkedLength);
  request.add(header.buffer);
  for (const record of records) request.add(record);
}

/** JavaScript's own `-`, as kafkajs computes deltas (timestamps are mostly numeric strings). */
function subtract(a: unknown, b: unknown): number {
  return (a as number) - (b as number);
}
