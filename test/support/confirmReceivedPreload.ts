/**
 * A deliberately broken relay, for proving that the fault checker can fail: loaded into a relay process with
 * `node --require` (NODE_OPTIONS), it makes every status update confirm the position *received* from PostgreSQL
 * instead of the one acked by the broker. Test-only: nothing in the product can turn this on.
 */
import { WalSource } from '../../src/source/wal/walSource.js';

interface WalSourceInternals {
  confirmed: bigint;
  received: bigint;
  report(): Promise<void>;
}

const prototype = WalSource.prototype as unknown as WalSourceInternals;
const report = Object.getOwnPropertyDescriptor(prototype, 'report')?.value as WalSourceInternals['report'];
prototype.report = function reportReceived(this: WalSourceInternals): Promise<void> {
  this.confirmed = this.received;
  return report.call(this);
};
