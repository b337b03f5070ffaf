import type { RelayLogger } from '../../core/ports.js';
import { SinkError } from '../sinkError.js';
import { toCreateTopicError, toSinkError } from './kafkaErrors.js';
import { ConfigResourceTypes, type Admin } from './kafkajs.js';

export interface TopicCatalogOptions {
  readonly createTopics: boolean;
  readonly partitions: number;
  /** Unset: the broker's default.replication.factor (CreateTopics with -1). */
  readonly replicationFactor: number | undefined;
  readonly logger: RelayLogger;
}

/** Kafka's default max.message.bytes, used when the broker does not say. */
const DEFAULT_MAX_MESSAGE_BYTES = 1_048_588;

/**
 * Knows which topics exist and how large a record batch each accepts. The producer never creates topics:
 * a missing one is created here when --create-topics is set, otherwise it is a clear, retried error.
 */
export class TopicCatalog {
  private readonly limits = new Map<string, number>();

  constructor(
    private readonly admin: Admin,
    private readonly options: TopicCatalogOptions,
  ) {}

  /** max.message.bytes per topic, for every topic in `topics`; throws a retriable SinkError for missing ones. */
  async ensure(topics: Iterable<string>): Promise<ReadonlyMap<string, number>> {
    const unknown = [...new Set(topics)].filter((t) => !this.limits.has(t));
    if (unknown.length > 0) await this.load(unknown);
    return this.limits;
  }

  /** Forget what we know, e.g. after a failed produce: the topic may have been deleted. */
  forget(topics: Iterable<string>): void {
    for (const topic of topics) this.limits.delete(topic);
  }

  private async load(topics: string[]): Promise<void> {
    let existing: Set<string>;
    try {
      existing = new Set(await this.admin.listTopics());
    } catch (error) {
      throw toSinkError(error, 'list Kafka topics');
    }
    const missing = topics.filter((t) => !existing.has(t));
    if (missing.length > 0) {
      if (!this.options.createTopics) {
        throw new SinkError(
          `Kafka topic ${missing.join(', ')} does not exist: create it, or run walbox with --create-topics`,
          { retriable: true, topicScoped: true },
        );
      }
      await this.create(missing);
    }
    try {
      const { resources } = await this.admin.describeConfigs({
        includeSynonyms: false,
        resources: topics.map((name) => ({
          type: ConfigResourceTypes.TOPIC,
          name,
          configNames: ['max.message.bytes'],
        })),
      });
      for (const resource of resources) {
        const value = resource.configEntries.find((e) => e.configName === 'max.message.bytes')?.configValue;
        this.limits.set(resource.resourceName, Number(value ?? DEFAULT_MAX_MESSAGE_BYTES));
      }
    } catch (error) {
      throw toSinkError(error, `describe Kafka topic ${topics.join(', ')}`);
    }
  }

  private async create(topics: string[]): Promise<void> {
    try {
      await this.admin.createTopics({
        waitForLeaders: true,
        topics: topics.map((topic) => ({
          topic,
          numPartitions: this.options.partitions,
          replicationFactor: this.options.replicationFactor ?? -1,
        })),
      });
    } catch (error) {
      // Another relay may have created it in between: listTopics will tell on the next attempt.
      throw toCreateTopicError(error, topics);
    }
    this.options.logger.info(
      {
        topics,
        partitions: this.options.partitions,
        replicationFactor: this.options.replicationFactor ?? 'broker default',
      },
      'created Kafka topics',
    );
  }
}
