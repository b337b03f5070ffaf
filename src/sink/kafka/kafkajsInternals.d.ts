// The parts of kafkajs 2.2.4's internals that walbox's patches use and their tests drive (package.json pins
// kafkajs to that version).
declare module 'kafkajs/src/protocol/encoder' {
  class Encoder {
    constructor(initialSize?: number);
    buf: Buffer;
    offset: number;
    readonly buffer: Buffer;
    ensureAvailable: (this: Encoder, length: number) => void;
    writeUVarInt: (this: Encoder, value: number) => Encoder;
    writeVarInt: (this: Encoder, value: number) => Encoder;
    writeVarLong: (this: Encoder, value: number | bigint | string) => Encoder;
    writeInt8: (this: Encoder, value: number) => Encoder;
    writeInt16(value: number): Encoder;
    writeInt32(value: number): Encoder;
    writeUInt32(value: number): Encoder;
    writeInt64(value: unknown): Encoder;
    writeString(value: string | null): Encoder;
    writeArray(values: readonly Encoder[]): Encoder;
    writeEncoder(value: Encoder): Encoder;
    size(): number;
    static sizeOfVarInt: (value: number) => number;
    static nextPowerOfTwo: (value: number) => number;
    static sizeOfVarLong: (value: number | bigint | string) => number;
  }
  export = Encoder;
}

// kafkajs's produce request v3: the v4–v7 requests kafkajs negotiates with current brokers wrap it.
// speedUpProduceRequest replaces it; the unit tests encode the records and headers walbox sends through both.
declare module 'kafkajs/src/protocol/requests/produce/v3/request' {
  import type Encoder from 'kafkajs/src/protocol/encoder';
  interface ProduceMessage {
    key?: Buffer | string | null;
    value: Buffer | string | null;
    timestamp?: string | number;
    headers?: Record<string, Buffer | string | (Buffer | string)[] | undefined>;
  }
  interface ProducePartitionData {
    partition: number;
    messages: ProduceMessage[];
    firstSequence?: number;
  }
  interface ProduceRequestArgs {
    acks: number;
    timeout: number;
    transactionalId?: string | null;
    producerId?: unknown;
    producerEpoch?: number;
    compression?: number;
    topicData: { topic: string; partitions: ProducePartitionData[] }[];
  }
  interface ProduceRequest {
    apiKey: number;
    apiVersion: number;
    apiName: string;
    expectResponse: () => boolean;
    encode: () => Promise<Encoder>;
  }
  function produceRequest(options: ProduceRequestArgs): ProduceRequest;
  export = produceRequest;
  export type { ProduceMessage, ProducePartitionData, ProduceRequest, ProduceRequestArgs };
}

// kafkajs's record (v2 format) encoder, which walbox's produce request falls back to for odd shapes.
declare module 'kafkajs/src/protocol/recordBatch/record/v0' {
  import type Encoder from 'kafkajs/src/protocol/encoder';
  interface RecordArgs {
    offsetDelta?: number;
    timestampDelta?: number;
    key?: unknown;
    value?: unknown;
    headers?: unknown;
  }
  type RecordEncoder = (args: RecordArgs) => Encoder;
  const Record: RecordEncoder;
  export = Record;
  export type { RecordArgs, RecordEncoder };
}

declare module 'kafkajs/src/protocol/recordBatch/v0' {
  import type Encoder from 'kafkajs/src/protocol/encoder';
  function RecordBatch(args: {
    compression: number;
    records: Encoder[];
    firstTimestamp: unknown;
    maxTimestamp: unknown;
    producerId: unknown;
    producerEpoch: number;
    firstSequence?: number;
    transactional: boolean;
    lastOffsetDelta: number;
  }): Promise<Encoder>;
  export { RecordBatch };
}

// kafkajs's framing of every request its connection sends.
declare module 'kafkajs/src/protocol/request' {
  import type Encoder from 'kafkajs/src/protocol/encoder';
  interface RequestFrameArgs {
    correlationId: number;
    clientId: string | null;
    request: { apiKey: number; apiVersion: number; encode: () => Promise<unknown> };
  }
  function createRequest(args: RequestFrameArgs): Promise<Encoder>;
  export = createRequest;
  export type { RequestFrameArgs };
}

// The crc32C of a record batch, unsigned.
declare module 'kafkajs/src/protocol/recordBatch/crc32C' {
  function crc32C(bytes: Buffer): number;
  export = crc32C;
}

declare module 'kafkajs/src/protocol/message/compression' {
  const Types: {
    readonly None: number;
    readonly GZIP: number;
    readonly Snappy: number;
    readonly LZ4: number;
  };
  export { Types };
}

declare module 'kafkajs/src/protocol/requests/apiKeys' {
  const apiKeys: { readonly Produce: number };
  export = apiKeys;
}

declare module 'kafkajs/src/utils/long' {
  interface Long {
    toString(): string;
  }
  const Long: { fromInt(value: number): Long };
  export = Long;
}
