import pg from 'pg';

import { parseLsn, type Lsn } from '../../core/lsn.js';
import { PreconditionError } from '../../errors.js';
import { toPgClientConfig } from '../../db/pgClientConfig.js';

export interface SlotState {
  /** Invalidated (wal_status = lost): the slot can no longer stream and must be recreated. */
  readonly lost: boolean;
  readonly confirmedFlushLsn: Lsn;
  readonly active: boolean;
  readonly activePid: number | null;
  readonly walStatus: string | null;
  /** A failover slot (PostgreSQL 17+), kept by standbys with sync_replication_slots; null before 17. */
  readonly failover: boolean | null;
}

interface SlotRow {
  plugin: string | null;
  slot_type: string;
  database: string | null;
  current_db: string;
  confirmed_flush_lsn: string | null;
  active: boolean;
  active_pid: number | null;
  wal_status: string | null;
  two_phase: boolean;
  failover: boolean | null;
}

/** The slot as pg_replication_slots shows it, or undefined when it does not exist. */
export async function readSlot(db: pg.ClientBase | pg.Pool, slot: string): Promise<SlotState | undefined> {
  const { rows } = await db.query<SlotRow>(
    `SELECT plugin, slot_type, database, current_database() AS current_db, confirmed_flush_lsn::text,
            active, active_pid, wal_status, two_phase,
            -- the column exists from PostgreSQL 17 on; to_jsonb reads it without a version-specific query
            (to_jsonb(s) ->> 'failover')::boolean AS failover
       FROM pg_replication_slots s WHERE slot_name = $1`,
    [slot],
  );
  const row = rows[0];
  if (row === undefined) return undefined;
  if (row.slot_type !== 'logical' || row.plugin !== 'pgoutput') {
    throw new PreconditionError(
      `replication slot ${slot} is a ${row.slot_type} slot with plugin ${row.plugin ?? 'none'}, not a logical ` +
        'pgoutput slot: choose another --slot',
    );
  }
  if (row.database !== row.current_db) {
    throw new PreconditionError(
      `replication slot ${slot} belongs to database ${row.database ?? '?'}, not ${row.current_db}: choose another --slot`,
    );
  }
  if (row.two_phase) {
    // pgoutput streams a two-phase transaction at PREPARE only to clients that ask for it: to us, never.
    throw new PreconditionError(
      `replication slot ${slot} was created with two_phase, whose prepared transactions walbox would not ` +
        `receive: drop it (SELECT pg_drop_replication_slot('${slot}') while no relay runs; walbox recreates it and ` +
        'catches up from the table) or choose another --slot',
    );
  }
  return {
    lost: row.wal_status === 'lost' || row.confirmed_flush_lsn === null,
    confirmedFlushLsn: row.confirmed_flush_lsn === null ? 0n : parseLsn(row.confirmed_flush_lsn),
    active: row.active,
    activePid: row.active_pid,
    walStatus: row.wal_status,
    failover: row.failover,
  };
}

/** Drops a slot no walsender holds any more (an invalidated one). */
export async function dropSlot(db: pg.ClientBase | pg.Pool, slot: string): Promise<void> {
  await db.query(
    'SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = $1',
    [slot],
  );
}

/**
 * Creates the slot on a replication connection, exporting a snapshot, and runs `useSnapshot` while that
 * snapshot is valid (the connection stays open and idle). The snapshot sees exactly the rows committed before
 * the slot's consistent point; everything after it will be streamed. Returns the consistent point.
 */
export async function createSlotWithSnapshot(
  databaseUrl: string,
  slot: string,
  useSnapshot: (snapshotName: string) => Promise<void>,
  { failover }: { failover: boolean },
): Promise<Lsn> {
  const replication = await connectReplication(databaseUrl, 'walbox slot create');
  try {
    const version = Number(
      (await replication.query<{ server_version_num: string }>('SHOW server_version_num')).rows[0]
        ?.server_version_num,
    );
    // PostgreSQL 15 introduced the parenthesised option list; older servers take EXPORT_SNAPSHOT.
    const options =
      version >= 150_000 ? `(SNAPSHOT 'export'${failover ? ', FAILOVER true' : ''})` : 'EXPORT_SNAPSHOT';
    const { rows } = await replication.query<{ consistent_point: string; snapshot_name: string }>(
      `CREATE_REPLICATION_SLOT ${pg.escapeIdentifier(slot)} LOGICAL pgoutput ${options}`,
    );
    const created = rows[0];
    if (created === undefined) throw new Error('CREATE_REPLICATION_SLOT returned no row');
    await useSnapshot(created.snapshot_name);
    return parseLsn(created.consistent_point);
  } finally {
    await replication.end().catch(() => undefined);
  }
}

/**
 * Turns an existing slot into a failover slot, or back (PostgreSQL 17+, ALTER_REPLICATION_SLOT): a slot created
 * before the upgrade or before the setting changed gets the protection too. The slot must not be in use.
 */
export async function alterSlotFailover(databaseUrl: string, slot: string, failover: boolean): Promise<void> {
  const replication = await connectReplication(databaseUrl, 'walbox slot alter');
  try {
    await replication.query(
      `ALTER_REPLICATION_SLOT ${pg.escapeIdentifier(slot)} (FAILOVER ${failover ? 'true' : 'false'})`,
    );
  } finally {
    await replication.end().catch(() => undefined);
  }
}

async function connectReplication(databaseUrl: string, applicationName: string): Promise<pg.Client> {
  const config: pg.ClientConfig & { replication: 'database' } = {
    ...toPgClientConfig(databaseUrl),
    application_name: applicationName,
    replication: 'database',
  };
  const replication = new pg.Client(config);
  replication.on('error', () => undefined);
  await replication.connect();
  return replication;
}
