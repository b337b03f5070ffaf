import pg from 'pg';
import { LogicalReplicationService } from 'pg-logical-replication';
// The base class is not re-exported by the package index; the deep path is stable in the pinned 2.5.0.
import { AbstractPlugin } from 'pg-logical-replication/dist/output-plugins/abstract.plugin.js';

import { parseLsn, type Lsn } from '../../core/lsn.js';
import { toError } from '../../errors.js';
import { decodePgoutput } from './pgoutput/decodePgoutput.js';
import type { PgoutputMessage } from './pgoutput/pgoutputMessage.js';
import { buildStandbyStatusUpdate } from './pgoutput/standbyStatus.js';
import { toPgClientConfig } from '../../db/pgClientConfig.js';

export interface ReplicationHandlers {
  onMessage(message: PgoutputMessage): void;
  onKeepalive(walEnd: Lsn, replyRequested: boolean): void;
  /** The stream failed or ended; called once. */
  onClose(error: Error | undefined): void;
}

export interface ReplicationStreamOptions {
  readonly databaseUrl: string;
  readonly slot: string;
  readonly publication: string;
  readonly applicationName?: string;
}

/** How long a polite close may take before the socket is destroyed. */
const STOP_WAIT_MS = 2_000;

type Decoded = { ok: true; message: PgoutputMessage } | { ok: false; error: Error };

/**
 * pgoutput through pg-logical-replication, with our decoder. START_REPLICATION always asks for 0/0, so the
 * server resumes at the slot's confirmed_flush_lsn, never at the library's last *received* LSN (pitfall P3).
 * Decoding never throws inside the socket listener (P7): failures travel as values.
 */
class OutboxPgoutputPlugin extends AbstractPlugin<{
  publication: string;
  onBackendPid: (pid: number) => void;
}> {
  get name(): string {
    return 'pgoutput';
  }

  async start(client: pg.Client, slotName: string): Promise<unknown> {
    // Our walsender's pid: if this connection is ever given up as dead, the server may keep the walsender (and
    // the slot) until wal_sender_timeout; knowing the pid lets us end exactly that one.
    const { rows } = await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
    if (rows[0] !== undefined) this.options.onBackendPid(rows[0].pid);
    const publications = pg.escapeLiteral(pg.escapeIdentifier(this.options.publication));
    return client.query(
      `START_REPLICATION SLOT ${pg.escapeIdentifier(slotName)} LOGICAL 0/0 ` +
        `(proto_version '1', publication_names ${publications})`,
    );
  }

  parse(buffer: Buffer): Decoded {
    try {
      return { ok: true, message: decodePgoutput(buffer) };
    } catch (error) {
      return { ok: false, error: toError(error) };
    }
  }
}

/** The library's private connection: we write our own status updates and pause the socket through it. */
interface ServiceInternals {
  _connection?: {
    sendCopyFromChunk(chunk: Buffer): void;
    stream?: { pause(): void; resume(): void; destroy(): void };
  } | null;
}

/**
 * One replication connection. Wraps pg-logical-replication 2.5.0 and neutralises its pitfalls: no automatic or
 * timer acknowledgements (P1, P2: acknowledge() would send lsn+1 and the timer acks unpublished LSNs), no flow
 * control (P4: data and keepalives stay in wire order in the caller's FIFO), our own status messages with the
 * exact flush LSN and a correct clock, and handlers that only enqueue.
 */
export class ReplicationStream {
  private readonly service: LogicalReplicationService;
  private closed = false;
  private pid: number | undefined;

  constructor(private readonly options: ReplicationStreamOptions) {
    const clientConfig: pg.ClientConfig = {
      ...toPgClientConfig(options.databaseUrl),
      application_name: options.applicationName ?? 'walbox',
      keepAlive: true,
      // Timestamps arrive as text in the walsender's DateStyle; ISO is what toIsoTimestamp reads. No
      // query_timeout here: it would kill START_REPLICATION (P6).
      options: '-c DateStyle=ISO -c TimeZone=UTC',
    };
    this.service = new LogicalReplicationService(clientConfig, {
      acknowledge: { auto: false, timeoutSeconds: 0 },
      flowControl: { enabled: false },
    });
  }

  /** Connects and starts streaming; resolves once the server has accepted START_REPLICATION. */
  async start(handlers: ReplicationHandlers): Promise<void> {
    const close = (error: Error | undefined): void => {
      if (this.closed) return;
      this.closed = true;
      handlers.onClose(error);
    };
    this.service.on('data', (_lsn: string, decoded: Decoded) => {
      if (decoded.ok) handlers.onMessage(decoded.message);
      else close(decoded.error);
    });
    this.service.on('heartbeat', (walEnd: string, _timestamp: number, replyRequested: boolean) => {
      handlers.onKeepalive(parseLsn(walEnd), replyRequested);
    });
    // Mandatory: an 'error' without a listener would be thrown by EventEmitter2.
    this.service.on('error', (error: unknown) => close(toError(error)));

    const plugin = new OutboxPgoutputPlugin({
      publication: this.options.publication,
      onBackendPid: (pid) => (this.pid = pid),
    });
    const started = new Promise<void>((resolve) => this.service.once('start', () => resolve()));
    const streaming = this.service.subscribe(plugin, this.options.slot, '0/0');
    streaming.then(
      () => close(undefined),
      (error: unknown) => close(toError(error)),
    );
    try {
      await Promise.race([
        started,
        streaming.then(() => Promise.reject(new Error('replication ended before it started'))),
      ]);
    } catch (error) {
      // The library leaves its connection open when START_REPLICATION is refused (55006 slot in use, 55000
      // invalidated): each retry would keep one more walsender (and this process) alive.
      await this.stop();
      throw error;
    }
  }

  /** The server process (walsender) of this connection, once connected. */
  backendPid(): number | undefined {
    return this.pid;
  }

  /** Reports `flushLsn` as flushed and applied (exactly: no +1), and `receivedLsn` as written. */
  sendStatus(flushLsn: Lsn, receivedLsn: Lsn, replyRequested = false): boolean {
    const connection = (this.service as unknown as ServiceInternals)._connection;
    if (this.closed || connection === null || connection === undefined) return false;
    connection.sendCopyFromChunk(buildStandbyStatusUpdate(flushLsn, new Date(), replyRequested, receivedLsn));
    return true;
  }

  /** Stops reading the socket (backpressure); status updates still go out. */
  pause(): void {
    (this.service as unknown as ServiceInternals)._connection?.stream?.pause();
  }

  resume(): void {
    (this.service as unknown as ServiceInternals)._connection?.stream?.resume();
  }

  /**
   * Closes the connection: politely (Terminate, then wait for the server to close) unless `force`, and never
   * waiting longer than a moment, since a dead path (half-open connection) would never answer.
   */
  async stop(options: { force?: boolean } = {}): Promise<void> {
    this.closed = true;
    const socket = (this.service as unknown as ServiceInternals)._connection?.stream;
    if (options.force === true) socket?.destroy();
    const ending = this.service.destroy().catch(() => undefined);
    const timer = setTimeout(() => socket?.destroy(), STOP_WAIT_MS);
    try {
      await ending;
    } finally {
      clearTimeout(timer);
    }
  }
}
