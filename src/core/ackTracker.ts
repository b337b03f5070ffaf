import type { Lsn } from './lsn.js';

interface TrackedTransaction {
  readonly id: number;
  pending: number;
  endLsn: Lsn | undefined;
}

/**
 * Decides which WAL position may be confirmed: the commit end LSN of the longest prefix of transactions (in
 * stream order) that are committed and whose events are all acked and marked (guarantee G2). Events may be acked
 * before their Commit arrives; a transaction is confirmable only once both hold. Keepalive positions count only
 * when nothing at all is in flight (G5).
 */
export class AckTracker {
  private readonly transactions: TrackedTransaction[] = [];
  private readonly byId = new Map<number, TrackedTransaction>();
  private nextId = 1;
  private confirmed: Lsn;
  private pendingEvents = 0;

  constructor(confirmed: Lsn) {
    this.confirmed = confirmed;
  }

  /** Opens a transaction at its Begin; returns its id for the events and the commit. */
  begin(): number {
    const transaction: TrackedTransaction = { id: this.nextId++, pending: 0, endLsn: undefined };
    this.transactions.push(transaction);
    this.byId.set(transaction.id, transaction);
    return transaction.id;
  }

  addEvent(transactionId: number): void {
    this.get(transactionId).pending++;
    this.pendingEvents++;
  }

  commit(transactionId: number, endLsn: Lsn): void {
    this.get(transactionId).endLsn = endLsn;
    this.advance();
  }

  /** The broker acked the event and its row is marked (processed or dead-lettered). */
  ack(transactionId: number): void {
    const transaction = this.get(transactionId);
    if (transaction.pending === 0)
      throw new Error(`ack without a pending event in transaction ${transactionId}`);
    transaction.pending--;
    this.pendingEvents--;
    this.advance();
  }

  /** A keepalive's WAL end: everything before it was sent to us, so it is safe when nothing is in flight. */
  observeKeepalive(walEnd: Lsn): void {
    if (this.transactions.length === 0 && walEnd > this.confirmed) this.confirmed = walEnd;
  }

  /** The highest position that may be confirmed to PostgreSQL now. */
  confirmable(): Lsn {
    return this.confirmed;
  }

  /** Events received but not yet acked and marked. */
  inFlightEvents(): number {
    return this.pendingEvents;
  }

  private get(transactionId: number): TrackedTransaction {
    const transaction = this.byId.get(transactionId);
    if (transaction === undefined) throw new Error(`unknown transaction ${transactionId}`);
    return transaction;
  }

  private advance(): void {
    for (;;) {
      const head = this.transactions[0];
      if (head?.endLsn === undefined || head.pending > 0) return;
      this.transactions.shift();
      this.byId.delete(head.id);
      if (head.endLsn > this.confirmed) this.confirmed = head.endLsn;
    }
  }
}
