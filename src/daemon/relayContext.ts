import type { RelayConfig } from '../config/relayConfig.js';
import type { RelayObserver, Sink } from '../core/ports.js';
import type { RelayRole } from '../core/relayRole.js';
import type { Logger } from '../observability/createLogger.js';

/** What the composition root hands to a mode's run loop. */
export interface RelayContext {
  readonly config: RelayConfig;
  readonly databaseUrl: string;
  readonly sink: Sink;
  readonly logger: Logger;
  readonly observer: RelayObserver;
  /** Aborted by the first SIGTERM/SIGINT: finish what is in flight, then stop. */
  readonly stop: AbortSignal;
  /** Aborted when --shutdown-timeout runs out: give up without confirming anything more. */
  readonly giveUp: AbortSignal;
  /** Called when the relay delivers (again), or stands by while another relay holds the replication slot. */
  readonly onRole?: (role: RelayRole) => void;
}
