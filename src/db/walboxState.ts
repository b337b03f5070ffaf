import type pg from 'pg';

import { formatLsn, type Lsn } from '../core/lsn.js';
import { quoteQualified } from './quoteIdentifier.js';

export interface SlotRecord {
  readonly caughtUp: boolean;
  readonly confirmedLsn: string | null;
  /** False when the record was written on another cluster (a restored backup, a promoted copy). */
  readonly sameSystem: boolean;
}

/** The walbox_state row of one slot (see sql/000003_create_walbox_state.sql). */
export class WalboxState {
  private readonly table: string;

  constructor(
    private readonly db: pg.Pool,
    private readonly names: { readonly schema: string; readonly table: string; readonly slot: string },
  ) {
    this.table = quoteQualified(names.schema, 'walbox_state');
  }

  async read(): Promise<SlotRecord | undefined> {
    const { rows } = await this.db.query<{
      caught_up: boolean;
      confirmed_lsn: string | null;
      same_system: boolean;
    }>(
      `SELECT caught_up_at IS NOT NULL AS caught_up, confirmed_lsn::text,
              system_identifier = (SELECT system_identifier::text FROM pg_control_system()) AS same_system
         FROM ${this.table} WHERE slot = $1`,
      [this.names.slot],
    );
    const row = rows[0];
    return row === undefined
      ? undefined
      : { caughtUp: row.caught_up, confirmedLsn: row.confirmed_lsn, sameSystem: row.same_system };
  }

  /** A new slot (ours or found without a record): its pre-existing pending rows still need a catch-up. */
  async recordSlot(confirmedLsn: Lsn): Promise<void> {
    await this.db.query(
      `INSERT INTO ${this.table} (slot, outbox_table, system_identifier, confirmed_lsn, caught_up_at)
       VALUES ($1, $2, (SELECT system_identifier::text FROM pg_control_system()), $3::pg_lsn, NULL)
       ON CONFLICT (slot) DO UPDATE
          SET outbox_table = EXCLUDED.outbox_table, system_identifier = EXCLUDED.system_identifier,
              confirmed_lsn = EXCLUDED.confirmed_lsn, caught_up_at = NULL, updated_at = now()`,
      [this.names.slot, this.names.table, formatLsn(confirmedLsn)],
    );
  }

  async markCaughtUp(): Promise<void> {
    await this.db.query(`UPDATE ${this.table} SET caught_up_at = now(), updated_at = now() WHERE slot = $1`, [
      this.names.slot,
    ]);
  }

  async recordConfirmed(lsn: Lsn): Promise<void> {
    await this.db.query(
      `UPDATE ${this.table} SET confirmed_lsn = $2::pg_lsn, updated_at = now()
        WHERE slot = $1 AND (confirmed_lsn IS NULL OR confirmed_lsn < $2::pg_lsn)`,
      [this.names.slot, formatLsn(lsn)],
    );
  }
}
