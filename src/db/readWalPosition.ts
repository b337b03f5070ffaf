import type pg from 'pg';

import { parseLsn, type Lsn } from '../core/lsn.js';

/** The server's WAL position now: where it writes, or on a standby, how far it has replayed. */
export async function readWalPosition(pool: pg.Pool): Promise<Lsn> {
  const { rows } = await pool.query<{ lsn: string }>(
    `SELECT (CASE WHEN pg_is_in_recovery() THEN pg_last_wal_replay_lsn() ELSE pg_current_wal_lsn() END)::text AS lsn`,
  );
  const lsn = rows[0]?.lsn;
  if (lsn === undefined) throw new Error('the server reported no WAL position');
  return parseLsn(lsn);
}
