import type { RelayConfig } from '../../config/relayConfig.js';
import type { RelayLogger } from '../../core/ports.js';
import { describeKafkaSecurity, toKafkaSecurity } from './kafkaSecurity.js';
import { KafkaSink } from './kafkaSink.js';
import { toMessageLayout } from './toKafkaMessage.js';

/** The sink as the configuration describes it (the relay, `dlq retry` and `doctor` use the same one). */
export function connectKafkaSink(config: RelayConfig, logger: RelayLogger): Promise<KafkaSink> {
  return KafkaSink.connect({
    brokers: config.kafkaBrokers,
    topics:
      config.topic === undefined
        ? {
            template: config.topicTemplate,
            allow: config.topicAllow === undefined ? undefined : new RegExp(`^(?:${config.topicAllow})$`),
          }
        : { topic: config.topic },
    layout: toMessageLayout(config),
    compression: config.compression,
    createTopics: config.createTopics,
    topicPartitions: config.topicPartitions,
    topicReplicationFactor: config.topicReplicationFactor,
    dlqTopic: config.dlqTopic,
    startupTimeoutMs: config.startupTimeoutMs,
    logger,
    security: toKafkaSecurity(config),
    describeSecurity: describeKafkaSecurity(config),
  });
}
