// The part of kafkajs 2.2.4's internal Encoder that speedUpRecordEncoding patches and its test drives
// (package.json pins kafkajs to that version).
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
    static nextPowerOfTwo: (value: number) => number;
    static sizeOfVarLong: (value: number | bigint | string) => number;
  }
  export = Encoder;
}

// kafkajs's produce request v3: the v4–v7 requests kafkajs negotiates with current brokers wrap its encoding, so
// the unit test encodes the records and headers walbox sends through it.
declare module 'kafkajs/src/protocol/requests/produce/v3/request' {
  interface ProduceMessage {
    key?: Buffer | string | null;
    value: Buffer | string | null;
    timestamp?: string | number;
    headers?: Record<string, Buffer | string | (Buffer | string)[] | undefined>;
  }
  function produceRequest(options: {
    acks: number;
    timeout: number;
    topicData: { topic: string; partitions: { partition: number; messages: ProduceMessage[] }[] }[];
  }): { encode: () => Promise<{ readonly buffer: Buffer }> };
  export = produceRequest;
}
