import type pg from 'pg';

import type { SlotFailover } from '../../config/relayConfig.js';
import { PreconditionError } from '../../errors.js';

/** PostgreSQL 17 added failover slots: a standby with sync_replication_slots = on keeps a copy of them. */
export const FAILOVER_SLOTS_SINCE = 170_000;

/**
 * Whether walbox's slot should be a failover slot on a server of `serverVersionNum` (server_version_num).
 * `on` is refused where the server cannot do it, rather than run without the protection the operator asked for.
 */
export function decideSlotFailover(setting: SlotFailover, serverVersionNum: number): boolean {
  if (setting === 'off') return false;
  if (serverVersionNum >= FAILOVER_SLOTS_SINCE) return true;
  if (setting === 'on') {
    throw new PreconditionError(
      `--slot-failover on needs PostgreSQL 17 or later (this server is ${formatServerVersion(serverVersionNum)}): ` +
        'use --slot-failover auto, or upgrade; on older servers a failover loses the slot and walbox recreates it ' +
        'and catches up from the table',
    );
  }
  return false;
}

/** 160010 → 16.10, 170006 → 17.6 */
export function formatServerVersion(serverVersionNum: number): string {
  return `${String(Math.floor(serverVersionNum / 10_000))}.${String(serverVersionNum % 10_000)}`;
}

/** server_version_num of the server behind `db` (e.g. 170006). */
export async function readServerVersion(db: pg.Pool | pg.ClientBase): Promise<number> {
  const { rows } = await db.query<{ server_version_num: string }>('SHOW server_version_num');
  return Number(rows[0]?.server_version_num);
}

/**
 * A failover slot is safe only when the logical walsender waits for the standbys that would be promoted
 * (synchronized_standby_slots): otherwise walbox may deliver a transaction a promoted standby never received.
 * Says so when this primary has physical slots (standbys) but names none of them.
 */
export async function describeUnguardedFailover(db: pg.Pool | pg.ClientBase): Promise<string | undefined> {
  const { rows } = await db.query<{ guarded: string | null; standbys: string[] }>(
    `SELECT current_setting('synchronized_standby_slots', true) AS guarded,
            array(SELECT slot_name::text FROM pg_replication_slots WHERE slot_type = 'physical') AS standbys`,
  );
  const row = rows[0];
  if (row === undefined || row.standbys.length === 0 || (row.guarded ?? '') !== '') return undefined;
  return (
    `physical replication slots ${row.standbys.join(', ')} exist but synchronized_standby_slots is empty: after a ` +
    'failover the promoted standby may lack transactions walbox already delivered; set synchronized_standby_slots ' +
    'to the standbys that may be promoted (see docs/operations.md, "Primary failover")'
  );
}
