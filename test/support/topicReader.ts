import { Kafka, logLevel, type Consumer } from 'kafkajs';

import { requireKafkaBrokers, uniqueName } from './testEnv.js';
import { waitFor } from './waitFor.js';

export interface ConsumedMessage {
  readonly topic: string;
  readonly partition: number;
  readonly offset: string;
  readonly key: string;
  readonly value: string;
  /** A tombstone: the record's value is null (not an empty string). */
  readonly nullValue: boolean;
  readonly headers: Readonly<Record<string, string>>;
  /** The record's timestamp (ms since the epoch). */
  readonly timestamp: number;
}

/** An independent kafkajs consumer (own group) that collects everything on some topics from the beginning. */
export class TopicReader {
  readonly messages: ConsumedMessage[] = [];
  private constructor(private readonly consumer: Consumer) {}

  static async start(topics: readonly string[]): Promise<TopicReader> {
    const kafka = new Kafka({
      clientId: 'walbox-test-reader',
      brokers: requireKafkaBrokers(),
      logLevel: logLevel.NOTHING,
    });
    const consumer = kafka.consumer({ groupId: uniqueName('reader'), maxWaitTimeInMs: 200 });
    await consumer.connect();
    await consumer.subscribe({ topics: [...topics], fromBeginning: true });
    const reader = new TopicReader(consumer);
    await consumer.run({
      eachMessage: ({ topic, partition, message }) => {
        const headers: Record<string, string> = {};
        for (const [name, value] of Object.entries(message.headers ?? {})) {
          if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(',') : value.toString();
        }
        reader.messages.push({
          topic,
          partition,
          offset: message.offset,
          key: message.key?.toString() ?? '',
          value: message.value?.toString() ?? '',
          nullValue: message.value === null,
          headers,
          timestamp: Number(message.timestamp),
        });
        return Promise.resolve();
      },
    });
    return reader;
  }

  /** Message ids (the `id` header) seen so far, with duplicates. */
  ids(): string[] {
    return this.messages.map((m) => m.headers['id'] ?? '');
  }

  /** Waits until every id in `expected` has been consumed. */
  async waitForIds(expected: Iterable<string>, timeoutMs = 120_000): Promise<void> {
    const wanted = new Set(expected);
    await waitFor(
      () => {
        const seen = new Set(this.ids());
        for (const id of wanted) if (!seen.has(id)) return false;
        return true;
      },
      {
        timeoutMs,
        intervalMs: 200,
        what: `${wanted.size} events on Kafka (have ${new Set(this.ids()).size})`,
      },
    );
  }

  /** Waits until every partition has been read up to `ends` (next offsets, e.g. from fetchTopicOffsets). */
  async waitForOffsets(topic: string, ends: ReadonlyMap<number, bigint>, timeoutMs = 60_000): Promise<void> {
    await waitFor(
      () =>
        [...ends].every(
          ([partition, end]) =>
            end === 0n ||
            this.messages.some(
              (m) => m.topic === topic && m.partition === partition && BigInt(m.offset) + 1n >= end,
            ),
        ),
      { timeoutMs, intervalMs: 200, what: `${topic} read to its end offsets` },
    );
  }

  async stop(): Promise<void> {
    await this.consumer.disconnect();
  }
}
