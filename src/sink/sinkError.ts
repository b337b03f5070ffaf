import { WalboxError, type WalboxErrorOptions } from '../errors.js';

/**
 * The broker could not be reached or refused a request; `retriable` says whether waiting can help. `topicScoped`:
 * the failure concerns the topics of the request, not the cluster (a missing topic, a missing ACL), so events
 * bound for other topics can still go.
 */
export class SinkError extends WalboxError {
  readonly topicScoped: boolean;

  /**
   * `misconfigured`: the cluster refuses what the configuration asks (a replication factor above the brokers, a
   * policy, a missing ACL). Still retried, since an event cannot be skipped without an operator, but reported
   * as a configuration error (SINK_MISCONFIGURED, logged as an error with the fix), never as an outage.
   */
  constructor(
    message: string,
    options: WalboxErrorOptions & { topicScoped?: boolean; misconfigured?: boolean } = {},
  ) {
    super(
      options.misconfigured === true
        ? 'SINK_MISCONFIGURED'
        : options.retriable === true
          ? 'SINK_UNAVAILABLE'
          : 'SINK_REJECTED',
      message,
      options,
    );
    this.topicScoped = options.topicScoped ?? false;
  }
}
