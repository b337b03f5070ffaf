import { WalboxError, type WalboxErrorOptions } from '../errors.js';

/**
 * The broker could not be reached or refused a request; `retriable` says whether waiting can help. `topicScoped`:
 * the failure concerns the topics of the request, not the cluster (a missing topic, a missing ACL), so events
 * bound for other topics can still go.
 */
export class SinkError extends WalboxError {
  readonly topicScoped: boolean;

  constructor(message: string, options: WalboxErrorOptions & { topicScoped?: boolean } = {}) {
    super(options.retriable === true ? 'SINK_UNAVAILABLE' : 'SINK_REJECTED', message, options);
    this.topicScoped = options.topicScoped ?? false;
  }
}
