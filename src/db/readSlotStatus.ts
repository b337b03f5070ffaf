import type pg from 'pg';

/** A replication slot as operators watch it (SPEC §Observability); sizes in bytes. */
export interface SlotStatus {
  readonly slot: string;
  readonly exists: boolean;
  readonly active: boolean;
  readonly activePid: number | null;
  /** WAL written since the slot's confirmed position: what a restart would stream again. */
  readonly lagBytes: number | null;
  /** WAL the server keeps on disk for this slot (from restart_lsn). */
  readonly retainedWalBytes: number | null;
  /** reserved, extended, unreserved or lost. */
  readonly walStatus: string | null;
  /** WAL that may still be written before the slot is invalidated; null without max_slot_wal_keep_size. */
  readonly safeWalSizeBytes: number | null;
  readonly confirmedFlushLsn: string | null;
  readonly restartLsn: string | null;
  readonly plugin: string | null;
}

interface SlotRow {
  active: boolean;
  active_pid: number | null;
  lag: string | null;
  retained: string | null;
  wal_status: string | null;
  safe_wal_size: string | null;
  confirmed_flush_lsn: string | null;
  restart_lsn: string | null;
  plugin: string | null;
}

const toNumber = (value: string | null): number | null => (value === null ? null : Number(value));

export async function readSlotStatus(db: pg.ClientBase | pg.Pool, slot: string): Promise<SlotStatus> {
  const { rows } = await db.query<SlotRow>(
    `SELECT active, active_pid,
            pg_wal_lsn_diff(pg_current_wal_lsn(), confirmed_flush_lsn)::text AS lag,
            pg_wal_lsn_diff(pg_current_wal_lsn(), restart_lsn)::text AS retained,
            wal_status, safe_wal_size::text, confirmed_flush_lsn::text, restart_lsn::text, plugin
       FROM pg_replication_slots WHERE slot_name = $1`,
    [slot],
  );
  const row = rows[0];
  if (row === undefined) {
    return {
      slot,
      exists: false,
      active: false,
      activePid: null,
      lagBytes: null,
      retainedWalBytes: null,
      walStatus: null,
      safeWalSizeBytes: null,
      confirmedFlushLsn: null,
      restartLsn: null,
      plugin: null,
    };
  }
  return {
    slot,
    exists: true,
    active: row.active,
    activePid: row.active_pid,
    lagBytes: toNumber(row.lag),
    retainedWalBytes: toNumber(row.retained),
    walStatus: row.wal_status,
    safeWalSizeBytes: toNumber(row.safe_wal_size),
    confirmedFlushLsn: row.confirmed_flush_lsn,
    restartLsn: row.restart_lsn,
    plugin: row.plugin,
  };
}
