import type pg from 'pg';

/** The connection streaming from the slot (pg_stat_replication): with standby relays, which one is active. */
export interface SlotReader {
  readonly pid: number;
  /** The reader's application_name (walbox's --application-name); null when this role may not see it. */
  readonly applicationName: string | null;
  /** Where it connects from (a pod or host address); null over a Unix socket or when not visible. */
  readonly clientAddr: string | null;
  /** When its connection started (ISO 8601). */
  readonly backendStart: string | null;
}

/** A replication slot as operators watch it; sizes in bytes. */
export interface SlotStatus {
  readonly slot: string;
  readonly exists: boolean;
  readonly active: boolean;
  readonly activePid: number | null;
  /** Who streams from it now, or null when no one does. */
  readonly activeReader: SlotReader | null;
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
  /** A failover slot, kept by standbys with sync_replication_slots (PostgreSQL 17+); null before 17 or missing. */
  readonly failover: boolean | null;
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
  application_name: string | null;
  client_addr: string | null;
  backend_start: Date | null;
  failover: boolean | null;
}

const toNumber = (value: string | null): number | null => (value === null ? null : Number(value));

export async function readSlotStatus(db: pg.ClientBase | pg.Pool, slot: string): Promise<SlotStatus> {
  const { rows } = await db.query<SlotRow>(
    `SELECT s.active, s.active_pid, r.application_name, host(r.client_addr) AS client_addr, r.backend_start,
            pg_wal_lsn_diff(pg_current_wal_lsn(), s.confirmed_flush_lsn)::text AS lag,
            pg_wal_lsn_diff(pg_current_wal_lsn(), s.restart_lsn)::text AS retained,
            s.wal_status, s.safe_wal_size::text, s.confirmed_flush_lsn::text, s.restart_lsn::text, s.plugin,
            -- from PostgreSQL 17 on; to_jsonb reads it without a version-specific query
            (to_jsonb(s) ->> 'failover')::boolean AS failover
       FROM pg_replication_slots s LEFT JOIN pg_stat_replication r ON r.pid = s.active_pid
      WHERE s.slot_name = $1`,
    [slot],
  );
  const row = rows[0];
  if (row === undefined) {
    return {
      slot,
      exists: false,
      active: false,
      activePid: null,
      activeReader: null,
      lagBytes: null,
      retainedWalBytes: null,
      walStatus: null,
      safeWalSizeBytes: null,
      confirmedFlushLsn: null,
      restartLsn: null,
      plugin: null,
      failover: null,
    };
  }
  return {
    slot,
    exists: true,
    active: row.active,
    activePid: row.active_pid,
    activeReader:
      row.active_pid === null
        ? null
        : {
            pid: row.active_pid,
            applicationName: row.application_name,
            clientAddr: row.client_addr,
            backendStart: row.backend_start?.toISOString() ?? null,
          },
    lagBytes: toNumber(row.lag),
    retainedWalBytes: toNumber(row.retained),
    walStatus: row.wal_status,
    safeWalSizeBytes: toNumber(row.safe_wal_size),
    confirmedFlushLsn: row.confirmed_flush_lsn,
    restartLsn: row.restart_lsn,
    plugin: row.plugin,
    failover: row.failover,
  };
}
