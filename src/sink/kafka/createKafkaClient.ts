import type { RelayLogger } from '../../core/ports.js';
import type { KafkaSecurity } from './kafkaSecurity.js';
import { Kafka, logLevel, type logCreator } from './kafkajs.js';
import { speedUpRecordEncoding } from './speedUpRecordEncoding.js';
import { stopRequestQueueSpin } from './stopRequestQueueSpin.js';

export interface KafkaClientOptions {
  readonly brokers: readonly string[];
  readonly clientId: string;
  readonly logger: RelayLogger;
  readonly security?: KafkaSecurity;
}

/**
 * kafkajs's own retries stay short: our relay loop retries forever with its own backoff and logs each failure,
 * so an outage shows up in our logs and readiness instead of hiding inside one endless send().
 */
export function createKafkaClient(options: KafkaClientOptions): Kafka {
  stopRequestQueueSpin();
  speedUpRecordEncoding();
  const bridge: logCreator =
    () =>
    ({ namespace, level, log }) => {
      const { message, ...fields } = log;
      const entry = { component: 'kafkajs', namespace, ...fields };
      if (level === logLevel.ERROR) options.logger.warn(entry, message);
      else if (level === logLevel.WARN) options.logger.warn(entry, message);
      else options.logger.debug(entry, message);
    };
  return new Kafka({
    clientId: options.clientId,
    brokers: [...options.brokers],
    ...(options.security?.ssl === undefined ? {} : { ssl: options.security.ssl }),
    ...(options.security?.sasl === undefined ? {} : { sasl: options.security.sasl }),
    connectionTimeout: 3_000,
    requestTimeout: 30_000,
    retry: { retries: 3, initialRetryTime: 300, maxRetryTime: 3_000 },
    logLevel: logLevel.WARN,
    logCreator: bridge,
  });
}
