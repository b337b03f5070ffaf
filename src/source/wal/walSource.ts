import type { OutboxColumns } from '../../outbox/outboxColumns.js';
import { formatLsn, type Lsn } from '../../core/lsn.js';
import { WalboxError } from '../../errors.js';
import type { ChangeStream, RelayLogger, StreamItem } from '../../core/ports.js';
import { DecodeError } from './pgoutput/decodeError.js';
import type { PgoutputMessage } from './pgoutput/pgoutputMessage.js';
import { toUnixMs } from './pgoutput/standbyStatus.js';
import { ReplicationStream } from './replicationStream.js';
import { OutboxRelation } from './toOutboxRecord.js';

export interface WalSourceOptions {
  readonly databaseUrl: string;
  readonly slot: string;
  readonly publication: string;
  /** Of the replication connection: what pg_stat_replication and synchronous_standby_names see. */
  readonly applicationName: string;
  readonly schema: string;
  readonly table: string;
  readonly columns: OutboxColumns;
  /** The slot's confirmed_flush_lsn at start: status updates never report less. */
  readonly startLsn: Lsn;
  readonly statusIntervalMs: number;
  /** Nothing received for this long while the socket is read (and replies are asked for): the connection is dead. */
  readonly receiveTimeoutMs: number;
  /** Stop reading the socket above this many buffered items or bytes (G6); resume below half. */
  readonly highWaterItems: number;
  readonly highWaterBytes: number;
  readonly logger: RelayLogger;
  /** Records a position before it is reported to the server. */
  readonly persistPosition: (lsn: Lsn) => Promise<void>;
}

/**
 * Reply requests within one second that only a walsender waiting for us to catch up sends: in a shutdown it asks
 * again as soon as we answer, while in normal operation it asks at most every wal_sender_timeout / 2.
 */
const SHUTDOWN_REPLY_REQUESTS = 10;

/**
 * WAL mode's ChangeStream: decoded pgoutput messages become stream items in one FIFO, data and keepalives in
 * wire order (so a keepalive is only seen after every data message sent before it). Status updates go out on
 * our own timer and whenever the server asks, also while the socket is paused. Before a status update reports a
 * new position, `persistPosition` records it (walbox_state), so the slot is ahead of walbox's own record only if
 * someone else moved it (or the record could not be written: then the next start merely catches up).
 */
export class WalSource implements ChangeStream {
  private readonly items: StreamItem[] = [];
  private head = 0;
  private bufferedBytes = 0;
  private paused = false;
  private receiving = true;
  private failure: Error | undefined;
  private waiter: { resolve: () => void } | undefined;
  private confirmed: Lsn;
  /** The position last reported to the server (and recorded before that). */
  private reported: Lsn;
  private reporting = false;
  private replyWanted = false;
  /** Everything up to here has reached us (commit ends and keepalive positions): the status update's write. */
  private received: Lsn;
  private readonly relations = new Map<number, OutboxRelation | null>();
  private xid = 0;
  private commitTimeMs = 0;
  private timer: NodeJS.Timeout | undefined;
  private readonly stream: ReplicationStream;
  private lastReceivedAt = Date.now();
  private lastStatusAt = 0;
  /** When the last SHUTDOWN_REPLY_REQUESTS reply requests arrived, oldest first. */
  private readonly replyRequests: number[] = [];
  private abandoned = false;

  private constructor(private readonly options: WalSourceOptions) {
    this.confirmed = options.startLsn;
    this.reported = options.startLsn;
    this.received = options.startLsn;
    this.stream = new ReplicationStream({
      databaseUrl: options.databaseUrl,
      slot: options.slot,
      publication: options.publication,
      applicationName: options.applicationName,
    });
  }

  /** Connects and starts streaming from the slot's confirmed position. */
  static async start(options: WalSourceOptions): Promise<WalSource> {
    const source = new WalSource(options);
    await source.stream.start({
      onMessage: (message) => source.receive(message),
      onKeepalive: (walEnd, replyRequested) => source.receiveKeepalive(walEnd, replyRequested),
      onClose: (error) => source.fail(error ?? new Error('the replication stream ended')),
    });
    source.lastReceivedAt = Date.now();
    source.timer = setInterval(() => source.tick(), Math.min(options.statusIntervalMs, 1_000));
    source.timer.unref();
    return source;
  }

  async next(): Promise<StreamItem | undefined> {
    for (;;) {
      if (this.failure !== undefined && this.receiving) throw this.failure;
      const item = this.items[this.head];
      if (item !== undefined) {
        this.items[this.head] = undefined as unknown as StreamItem;
        this.head++;
        if (this.head > 4_096 && this.head * 2 > this.items.length) {
          this.items.splice(0, this.head);
          this.head = 0;
        }
        if (item.kind === 'record') this.bufferedBytes -= item.record.payload?.length ?? 0;
        this.resumeIfDrained();
        return item;
      }
      if (!this.receiving) return undefined;
      await new Promise<void>((resolve) => (this.waiter = { resolve }));
    }
  }

  buffered(): number {
    return this.items.length - this.head;
  }

  confirm(lsn: Lsn): void {
    if (lsn > this.confirmed) this.confirmed = lsn;
    // The server asked for a reply (e.g. a walsender waiting to shut down): answer with the new position now.
    if (this.replyWanted) {
      this.replyWanted = false;
      void this.report();
    }
  }

  async stopReceiving(): Promise<void> {
    this.receiving = false;
    this.stream.pause();
    this.wake();
    return Promise.resolve();
  }

  /** Sends the final status update and closes the connection. */
  async close(): Promise<void> {
    if (this.timer !== undefined) clearInterval(this.timer);
    if (!this.abandoned) await this.report();
    await this.stream.stop();
  }

  /**
   * Closes the connection without reporting anything more, and fails the stream (retriable): what was sent and
   * not confirmed comes again from the slot on the next start. For a connection that cannot be answered: a
   * server shutting down that waits for a position we cannot reach, or a dead network path. Also called when
   * the shutdown timeout gives up.
   */
  abandon(reason: string): void {
    if (this.abandoned) return;
    this.abandoned = true;
    if (this.timer !== undefined) clearInterval(this.timer);
    void this.stream.stop({ force: true });
    this.fail(new WalboxError('REPLICATION_LOST', reason, { retriable: true }));
  }

  /** The walsender of a connection given up as dead (it may linger on the server), if any. */
  abandonedWalsender(): number | undefined {
    return this.abandoned ? this.stream.backendPid() : undefined;
  }

  private tick(): void {
    if (this.abandoned) return;
    const now = Date.now();
    if (this.paused || !this.receiving) {
      // Not reading is our choice: silence says nothing about the connection then.
      this.lastReceivedAt = now;
    } else if (now - this.lastReceivedAt >= this.options.receiveTimeoutMs) {
      this.options.logger.warn(
        { silentForMs: now - this.lastReceivedAt, slot: this.options.slot },
        'nothing received on the replication connection although the server was asked to answer: closing it ' +
          '(half-open connection?) and reconnecting',
      );
      this.abandon(`nothing received on the replication connection for ${now - this.lastReceivedAt} ms`);
      return;
    }
    if (now - this.lastStatusAt >= this.options.statusIntervalMs) void this.report();
  }

  /**
   * Records the confirmed position, then reports it. When the record cannot be written, the position is reported
   * anyway: a slot ahead of the record only costs a catch-up from the table on the next start, while withholding
   * it would hold up a server that is shutting down (its walsender waits for our flush position).
   */
  private async report(): Promise<void> {
    if (this.reporting) return;
    this.reporting = true;
    try {
      const lsn = this.confirmed;
      if (lsn > this.reported) {
        await this.options.persistPosition(lsn).catch((error: unknown) => {
          this.options.logger.debug({ err: error }, 'could not record the confirmed position');
        });
        this.reported = lsn;
      }
      this.sendStatus();
    } finally {
      this.reporting = false;
    }
  }

  private sendStatus(): void {
    this.lastStatusAt = Date.now();
    // Ask for an answer once the server has been silent for a status interval: the watchdog needs to hear it.
    const askForReply = Date.now() - this.lastReceivedAt >= this.options.statusIntervalMs;
    this.stream.sendStatus(this.reported, this.received, askForReply);
  }

  private receive(message: PgoutputMessage): void {
    this.lastReceivedAt = Date.now();
    switch (message.tag) {
      case 'begin':
        this.xid = message.xid;
        this.commitTimeMs = toUnixMs(message.commitTime);
        this.push({ kind: 'begin', commitLsn: message.finalLsn });
        return;
      case 'commit':
        if (message.endLsn > this.received) this.received = message.endLsn;
        this.push({ kind: 'commit', endLsn: message.endLsn });
        return;
      case 'relation':
        this.relations.set(message.relationId, this.toOutboxRelation(message));
        return;
      case 'insert': {
        const relation = this.relations.get(message.relationId);
        if (relation === undefined) {
          this.fail(new Error(`INSERT for relation ${message.relationId} before its Relation message`));
        } else if (relation !== null) {
          // This runs in the socket's listener: a throw here would be uncaught.
          try {
            this.push({
              kind: 'record',
              record: relation.toRecord(message.tuple, this.xid, this.commitTimeMs),
            });
          } catch (error) {
            this.fail(error as Error);
          }
        }
        return;
      }
      case 'unknown':
        // A message we cannot read may carry (or change how to read) outbox rows: skipping it could lose events.
        this.fail(
          new DecodeError(
            `unknown pgoutput message type 0x${message.byte.toString(16).padStart(2, '0')} from the server: ` +
              'walbox does not understand this PostgreSQL version or plugin option; please report it',
          ),
        );
        return;
      default:
        // Updates, deletes, truncates, types, origins and messages carry no outbox events.
        return;
    }
  }

  private toOutboxRelation(message: Extract<PgoutputMessage, { tag: 'relation' }>): OutboxRelation | null {
    if (message.schema !== this.options.schema || message.name !== this.options.table) return null;
    try {
      return new OutboxRelation(message, this.options.columns);
    } catch (error) {
      this.fail(error as Error);
      return null;
    }
  }

  private receiveKeepalive(walEnd: Lsn, replyRequested: boolean): void {
    this.lastReceivedAt = Date.now();
    if (walEnd > this.received) this.received = walEnd;
    this.push({ kind: 'keepalive', walEnd });
    if (!replyRequested) return;
    // Answer at once with what is durably delivered, so wal_sender_timeout never fires; and again as soon as
    // the position moves.
    this.replyWanted = true;
    this.sendStatus();
    if (walEnd > this.reported && this.isAskedAgainAndAgain()) {
      // A walsender in a fast shutdown waits until our flush position reaches what it sent, asking again at
      // every reply. The events in flight need the database to be marked, which a stopping server refuses:
      // holding on would hold the shutdown forever. Let go; they come again from the slot after the restart.
      this.options.logger.warn(
        { slot: this.options.slot, confirmed: formatLsn(this.reported), serverWaitsFor: formatLsn(walEnd) },
        'the server is shutting down and waits for positions not delivered yet: closing the replication ' +
          'connection without confirming them (they are delivered again after the restart)',
      );
      this.abandon('the server is shutting down (its walsender waits for positions not delivered yet)');
    }
  }

  /** True when the last SHUTDOWN_REPLY_REQUESTS reply requests came within one second. */
  private isAskedAgainAndAgain(): boolean {
    const now = Date.now();
    this.replyRequests.push(now);
    if (this.replyRequests.length > SHUTDOWN_REPLY_REQUESTS) this.replyRequests.shift();
    const oldest = this.replyRequests[0] ?? now;
    return this.replyRequests.length === SHUTDOWN_REPLY_REQUESTS && now - oldest <= 1_000;
  }

  private push(item: StreamItem): void {
    // Items arriving after stopReceiving() are dropped: they come again from the slot on the next start.
    if (!this.receiving || this.failure !== undefined) return;
    this.items.push(item);
    if (item.kind === 'record') this.bufferedBytes += item.record.payload?.length ?? 0;
    if (
      !this.paused &&
      (this.buffered() >= this.options.highWaterItems || this.bufferedBytes >= this.options.highWaterBytes)
    ) {
      this.paused = true;
      this.stream.pause();
      this.options.logger.debug(
        { buffered: this.buffered(), bytes: this.bufferedBytes },
        'replication paused',
      );
    }
    this.wake();
  }

  private resumeIfDrained(): void {
    if (
      this.paused &&
      this.receiving &&
      this.buffered() <= this.options.highWaterItems / 2 &&
      this.bufferedBytes <= this.options.highWaterBytes / 2
    ) {
      this.paused = false;
      this.stream.resume();
    }
  }

  private fail(error: Error): void {
    this.failure ??= error;
    this.wake();
  }

  private wake(): void {
    const waiter = this.waiter;
    this.waiter = undefined;
    waiter?.resolve();
  }
}
