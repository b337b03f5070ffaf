import type { OutboxRecord, RejectedRecord } from '../../core/outboxRecord.js';
import type { PublishResult, RelayLogger, Sink } from '../../core/ports.js';
import { explainBadHeaders } from '../../core/toEventHeaders.js';
import { resolveTopic, type TopicChoice } from '../../core/topicName.js';
import { ConfigError, PreconditionError } from '../../errors.js';
import { SinkError } from '../sinkError.js';
import { createKeyPartitioner } from './createKeyPartitioner.js';
import { createKafkaClient } from './createKafkaClient.js';
import { describeStartupRefusal } from './describeStartupRefusal.js';
import type { KafkaSecurity } from './kafkaSecurity.js';
import { findProtocolErrorType, isRecordRejection, toSinkError } from './kafkaErrors.js';
import { CompressionTypes, type Admin, type Message, type Producer, type TopicMessages } from './kafkajs.js';
import { TopicCatalog } from './topicCatalog.js';
import {
  estimateMessageBytes,
  estimateSingleBatchBytes,
  estimateSingleGzipBatchBytes,
  toKafkaMessage,
  type MessageLayout,
} from './toKafkaMessage.js';

export interface KafkaSinkOptions {
  readonly brokers: readonly string[];
  readonly topics: TopicChoice;
  readonly layout: MessageLayout;
  readonly compression: 'none' | 'gzip';
  readonly createTopics: boolean;
  readonly topicPartitions: number;
  readonly topicReplicationFactor: number | undefined;
  readonly dlqTopic: string | undefined;
  readonly startupTimeoutMs: number;
  readonly logger: RelayLogger;
  readonly clientId?: string;
  readonly security?: KafkaSecurity;
  /** Shown in the startup refusal line: which SASL mechanism and user were tried. */
  readonly describeSecurity?: string;
}

interface Outgoing {
  readonly record: OutboxRecord;
  readonly topic: string;
  readonly message: Message;
  readonly bytes: number;
}

/** Leaves room for the batch header and estimation error below the topic's max.message.bytes. */
const REQUEST_FILL_RATIO = 0.9;
const ACKS_ALL = -1;

/**
 * Publishes outbox records with kafkajs: acks=all, one request in flight, requests awaited in order, Java-compatible
 * murmur2 partitioning by key. Records the broker can never take (too large, invalid topic) are returned as
 * rejected instead of blocking the stream; everything else that fails is a retriable SinkError.
 */
export class KafkaSink implements Sink {
  private constructor(
    private readonly admin: Admin,
    private readonly producer: Producer,
    private readonly catalog: TopicCatalog,
    private readonly options: KafkaSinkOptions,
  ) {}

  /** Connects within the startup timeout, or throws a SinkError (fail fast at startup). */
  static async connect(options: KafkaSinkOptions): Promise<KafkaSink> {
    const kafka = createKafkaClient({
      brokers: options.brokers,
      clientId: options.clientId ?? 'walbox',
      logger: options.logger,
      ...(options.security === undefined ? {} : { security: options.security }),
    });
    const admin = kafka.admin({ retry: { retries: 0 } });
    const deadline = Date.now() + options.startupTimeoutMs;
    for (let delay = 250; ; delay = Math.min(delay * 2, 2_000)) {
      let brokers: number;
      try {
        await admin.connect();
        brokers = (await admin.describeCluster()).brokers.length;
      } catch (error) {
        await admin.disconnect().catch(() => undefined);
        // A refused login or an untrusted certificate is configuration: say so now instead of retrying.
        const refusal = describeStartupRefusal(error, options.brokers, options.describeSecurity);
        if (refusal !== undefined) throw refusal;
        if (Date.now() + delay >= deadline) {
          throw new SinkError(
            `cannot reach Kafka at ${options.brokers.join(',')} within ${Math.round(options.startupTimeoutMs / 1000)}s ` +
              `(${error instanceof Error ? error.message : String(error)}): check --kafka-brokers` +
              (options.security?.ssl !== undefined && /before secure TLS connection/.test(String(error))
                ? ' (is it a TLS listener? without TLS there, drop --kafka-ssl and the --kafka-ssl-* files)'
                : ''),
            { cause: error, retriable: true },
          );
        }
        await new Promise((resolve) => setTimeout(resolve, delay));
        continue;
      }
      const factor = options.topicReplicationFactor;
      if (options.createTopics && factor !== undefined && factor > brokers) {
        await admin.disconnect().catch(() => undefined);
        throw new ConfigError(
          `--topic-replication-factor ${String(factor)} is more than the ${String(brokers)} broker(s) of Kafka at ` +
            `${options.brokers.join(',')}: lower it, or leave it unset for the broker's default.replication.factor`,
        );
      }
      break;
    }
    const producer = kafka.producer({
      createPartitioner: createKeyPartitioner,
      allowAutoTopicCreation: false,
      maxInFlightRequests: 1,
      // Evaluated and left off: kafkajs's experimental idempotence retries forever inside send(), hiding outages.
      idempotent: false,
    });
    try {
      await producer.connect();
    } catch (error) {
      await admin.disconnect().catch(() => undefined);
      throw toSinkError(error, 'connect the Kafka producer');
    }
    const catalog = new TopicCatalog(admin, {
      createTopics: options.createTopics,
      partitions: options.topicPartitions,
      replicationFactor: options.topicReplicationFactor,
      logger: options.logger,
    });
    return new KafkaSink(admin, producer, catalog, options);
  }

  async publish(records: readonly OutboxRecord[]): Promise<PublishResult> {
    const rejected: RejectedRecord[] = [];
    const outgoing: Outgoing[] = [];
    for (const record of records) {
      const topic = resolveTopic(this.options.topics, record);
      if (!topic.ok) {
        rejected.push({ record, reason: topic.reason });
        continue;
      }
      if (record.problem !== undefined) {
        rejected.push({ record, reason: record.problem });
        continue;
      }
      const badHeaders = explainBadHeaders(record.headers);
      if (badHeaders !== undefined) {
        rejected.push({ record, reason: badHeaders });
        continue;
      }
      const message = toKafkaMessage(record, this.options.layout);
      outgoing.push({ record, topic: topic.topic, message, bytes: estimateMessageBytes(message) });
    }
    const limits = await this.catalog.ensure(outgoing.map((o) => o.topic));
    const sendable: Outgoing[] = [];
    for (const item of outgoing) {
      const limit = limits.get(item.topic) ?? Number.POSITIVE_INFINITY;
      let size = estimateSingleBatchBytes(item.message);
      if (size > limit && this.options.compression === 'gzip')
        size = estimateSingleGzipBatchBytes(item.message);
      if (size > limit) {
        rejected.push({
          record: item.record,
          reason: `event of about ${size} bytes exceeds max.message.bytes ${limit} of topic ${item.topic}`,
        });
      } else {
        sendable.push(item);
      }
    }
    const requestLimit = Math.min(...sendable.map((o) => limits.get(o.topic) ?? Number.POSITIVE_INFINITY));
    for (const chunk of chunkByBytes(sendable, requestLimit * REQUEST_FILL_RATIO)) {
      await this.sendIsolatingRejections(chunk, rejected);
    }
    return { rejected };
  }

  /**
   * At startup: the dead-letter topic must exist (or be created with --create-topics). Found missing only when
   * the first event is rejected, it would hold up every batch that carries one.
   */
  async requireDeadLetterTopic(): Promise<void> {
    const topic = this.options.dlqTopic;
    if (topic === undefined) return;
    try {
      await this.catalog.ensure([topic]);
    } catch (error) {
      if (error instanceof SinkError && error.code === 'SINK_MISCONFIGURED') {
        throw new ConfigError(`--dlq-topic ${topic}: ${error.message}`, { cause: error });
      }
      if (error instanceof SinkError && error.topicScoped) {
        throw new PreconditionError(
          `--dlq-topic ${topic}: ${error.message.replace(/^Kafka topic \S+ /, 'the topic ')}`,
          { cause: error },
        );
      }
      throw error;
    }
  }

  topicOf(record: OutboxRecord): string | undefined {
    const topic = resolveTopic(this.options.topics, record);
    return topic.ok ? topic.topic : undefined;
  }

  async publishDeadLetters(rejected: readonly RejectedRecord[]): Promise<void> {
    const topic = this.options.dlqTopic;
    if (topic === undefined || rejected.length === 0) return;
    await this.catalog.ensure([topic]);
    const messages = rejected.map(({ record, reason }) => {
      // Stamped when sent: the event time may be the very reason (or one reason) the event was refused.
      const message = toKafkaMessage(record, this.options.layout);
      return { ...message, timestamp: undefined, headers: { ...message.headers, walbox_error: reason } };
    });
    try {
      await this.producer.sendBatch({
        topicMessages: [{ topic, messages }],
        acks: ACKS_ALL,
        compression: this.codec(),
      });
    } catch (error) {
      // The row is dead-lettered in the table either way; the topic copy is best effort for what fits.
      if (isRecordRejection(error)) {
        this.options.logger.warn(
          { topic, err: error },
          'dead-letter topic refused the events; kept in the table only',
        );
        return;
      }
      this.catalog.forget([topic]);
      throw toSinkError(error, `produce to dead-letter topic ${topic}`);
    }
  }

  /** Whether the cluster answers a metadata request within `timeoutMs`; throws a SinkError saying why not. */
  async checkHealth(timeoutMs: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs).unref();
    });
    try {
      await Promise.race([this.admin.describeCluster(), timeout]);
    } catch (error) {
      throw toSinkError(error, `Kafka at ${this.options.brokers.join(',')} is unreachable`);
    } finally {
      clearTimeout(timer);
    }
  }

  async close(): Promise<void> {
    await this.producer.disconnect().catch(() => undefined);
    await this.admin.disconnect().catch(() => undefined);
  }

  /**
   * Sends in order; when the broker rejects records (or their timestamps), halves the chunk until the culprits
   * stand alone: a rejected one is dead-lettered, one with a refused timestamp is sent again unstamped.
   */
  private async sendIsolatingRejections(
    chunk: readonly Outgoing[],
    rejected: RejectedRecord[],
  ): Promise<void> {
    try {
      await this.producer.sendBatch({
        topicMessages: groupByTopic(chunk),
        acks: ACKS_ALL,
        timeout: 30_000,
        compression: this.codec(),
      });
    } catch (error) {
      // Event times outside what the topic accepts (Kafka 4 refuses timestamps over an hour ahead,
      // log.message.timestamp.after.max.ms): a clock or column problem, no reason to hold up or drop the event.
      const refusedTime =
        findProtocolErrorType(error) === 'INVALID_TIMESTAMP' &&
        chunk.some((o) => o.message.timestamp !== undefined);
      if (!refusedTime && !isRecordRejection(error)) {
        this.catalog.forget(chunk.map((o) => o.topic));
        throw toSinkError(error, `produce ${chunk.length} events to Kafka`);
      }
      const [first] = chunk;
      if (chunk.length === 1 && first !== undefined) {
        if (refusedTime) {
          this.options.logger.warn(
            { event_id: first.record.id, topic: first.topic, timestamp: first.message.timestamp },
            "the broker refused the event's timestamp (log.message.timestamp.*.max.ms): sent with the send time instead",
          );
          const unstamped = { ...first, message: { ...first.message, timestamp: undefined } };
          await this.sendIsolatingRejections([unstamped], rejected);
          return;
        }
        rejected.push({
          record: first.record,
          reason: toSinkError(error, `topic ${first.topic} rejected the event`).message,
        });
        return;
      }
      const middle = Math.ceil(chunk.length / 2);
      await this.sendIsolatingRejections(chunk.slice(0, middle), rejected);
      await this.sendIsolatingRejections(chunk.slice(middle), rejected);
    }
  }

  private codec(): CompressionTypes {
    return this.options.compression === 'gzip' ? CompressionTypes.GZIP : CompressionTypes.None;
  }
}

/** Splits into requests whose estimated size stays under `limit` (one record batch per partition must fit). */
function chunkByBytes(items: readonly Outgoing[], limit: number): Outgoing[][] {
  const chunks: Outgoing[][] = [];
  let current: Outgoing[] = [];
  let bytes = 0;
  for (const item of items) {
    if (current.length > 0 && bytes + item.bytes > limit) {
      chunks.push(current);
      current = [];
      bytes = 0;
    }
    current.push(item);
    bytes += item.bytes;
  }
  if (current.length > 0) chunks.push(current);
  return chunks;
}

/** kafkajs merges per topic; order within a topic (and so within a key) is the input order. */
function groupByTopic(items: readonly Outgoing[]): TopicMessages[] {
  const byTopic = new Map<string, Message[]>();
  for (const item of items) {
    const messages = byTopic.get(item.topic) ?? [];
    messages.push(item.message);
    byTopic.set(item.topic, messages);
  }
  return [...byTopic].map(([topic, messages]) => ({ topic, messages }));
}
