import type { RelayObserver } from '../core/ports.js';
import type { RelayRole } from '../core/relayRole.js';
import type { Logger } from './createLogger.js';

/**
 * What /readyz says about a failing step, in fixed words: the reasons (driver and broker error texts, hosts, user
 * names, slot details) stay in the log line `pipeline not ready`, since /readyz may be reachable by more people
 * than the logs. A step not listed here is one of the relay's retried steps (`publish to Kafka`, `poll`, …).
 */
const PUBLIC_PROBLEMS: ReadonlyMap<string, string> = new Map([
  ['kafka', 'unreachable'],
  ['database', 'cannot read the outbox status'],
  ['replication slot', 'missing, invalidated or not streaming'],
  ['replication', 'lost, reconnecting'],
]);
const RETRIED = 'failing, being retried';

/** The /readyz body: whether the pipeline delivers, and what does not, without any error text. */
export interface ReadinessReport {
  readonly ready: boolean;
  /** `ready`, `not ready: starting`, or `not ready: <step> <problem>, …` */
  readonly status: string;
  /** `starting` until the relay first delivers or stands by. A standby is ready: it takes over by itself. */
  readonly role: RelayRole | 'starting';
  /** Failing step → a fixed description of its problem. */
  readonly failing: Readonly<Record<string, string>>;
}

/**
 * Whether the pipeline is live: false from the first failed step (broker down, replication lost, database
 * unreachable) until that step succeeds again. Transitions are logged once each, so a stall is never silent
 * (G7); /readyz reports the same flag.
 */
export class Readiness {
  private readonly failing = new Map<string, string>();
  private role: RelayRole | undefined;

  constructor(private readonly logger: Logger) {}

  isReady(): boolean {
    return this.role !== undefined && this.failing.size === 0;
  }

  /**
   * The relay delivers, or stands by for the replication slot. A standby counts as ready: it is what a second
   * replica is for, and a Deployment's rollout and PodDisruptionBudget count only Ready pods.
   */
  setRole(role: RelayRole): void {
    const wasReady = this.isReady();
    this.role = role;
    if (!wasReady && this.isReady()) this.logger.info({ ready: true, role }, 'pipeline ready');
  }

  /** What fails now, by step, with the reasons (empty when ready, or when not started yet). For logs and tests. */
  failingSteps(): Record<string, string> {
    return Object.fromEntries(this.failing);
  }

  /** What /readyz shows: the failing steps in fixed words, never their reasons. */
  report(): ReadinessReport {
    const failing = Object.fromEntries(
      [...this.failing.keys()].map((step) => [step, PUBLIC_PROBLEMS.get(step) ?? RETRIED]),
    );
    const problems = Object.entries(failing).map(([step, problem]) => `${step} ${problem}`);
    const status = this.isReady()
      ? 'ready'
      : `not ready: ${problems.length > 0 ? problems.join(', ') : 'starting'}`;
    return { ready: this.isReady(), status, role: this.role ?? 'starting', failing };
  }

  /** A step fails with `reason`, or (undefined) works again. Fed by the retry loops and the health monitor. */
  setFailing(step: string, reason: string | undefined): void {
    const wasReady = this.isReady();
    if (reason === undefined) {
      if (!this.failing.delete(step)) return;
      if (this.isReady()) this.logger.info({ ready: true }, 'pipeline ready');
      return;
    }
    this.failing.set(step, reason);
    if (wasReady) this.logger.warn({ ready: false, step, reason }, 'pipeline not ready');
  }

  /** An observer that feeds this flag from the relay's retry loop. */
  observer(): RelayObserver {
    return {
      retrying: ({ step, error }) => this.setFailing(step, error.message),
      recovered: ({ step }) => this.setFailing(step, undefined),
    };
  }
}
