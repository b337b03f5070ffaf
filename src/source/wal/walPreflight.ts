import type pg from 'pg';

import { quoteIdentifier, quoteQualified } from '../../db/quoteIdentifier.js';
import { explainPublicationProblem, readPublication } from '../../db/readPublication.js';
import { PreconditionError } from '../../errors.js';
import { listRequiredColumns, type OutboxColumns } from '../../outbox/outboxColumns.js';
import type { SlotFailover } from '../../config/relayConfig.js';
import { decideSlotFailover, formatServerVersion, readServerVersion } from './slotFailover.js';
import { mayBecomeSynchronousStandby } from './synchronousStandbyNames.js';

export interface PreflightCheck {
  readonly name: string;
  readonly ok: boolean;
  /** What is wrong and how to fix it (failures), or what was found (passes). */
  readonly detail: string;
}

export interface PreflightNames {
  readonly schema: string;
  readonly table: string;
  readonly columns: OutboxColumns;
  readonly publication: string;
  readonly slot: string;
  /** The replication connection's application_name (synchronous_standby_names matches it). */
  readonly applicationName: string;
  readonly slotFailover: SlotFailover;
}

type Db = pg.Pool | pg.ClientBase;

/**
 * Every check a mode needs before it starts (WAL mode: before it touches a slot), each with the fix when it fails.
 * `walbox run` stops at the failures (exit 3); `walbox doctor` lists them all.
 */
export async function runPreflight(
  db: Db,
  names: PreflightNames,
  mode: 'wal' | 'poll',
): Promise<PreflightCheck[]> {
  const checks: PreflightCheck[] = [];
  if (mode === 'wal') {
    checks.push(await checkWalLevel(db));
    checks.push(await checkReplicationRole(db));
    checks.push(await checkSynchronousStandbys(db, names.applicationName));
    checks.push(await checkSlotFailover(db, names.slotFailover));
  }
  const table = await checkTable(db, names);
  checks.push(table);
  if (table.ok) checks.push(await checkTablePrivileges(db, names));
  if (mode === 'poll') return checks;
  checks.push(await checkStateTable(db, names));
  // A missing table would also fail the publication check: report the cause only.
  if (table.ok) checks.push(await checkPublication(db, names));
  checks.push(...(await checkCapacity(db, names.slot)));
  return checks;
}

/** Throws one PreconditionError listing every failed check, one per line. */
export function assertPreflight(checks: readonly PreflightCheck[]): void {
  const failed = checks.filter((c) => !c.ok);
  if (failed.length > 0) throw new PreconditionError(failed.map((c) => c.detail).join('\n'));
}

async function checkWalLevel(db: Db): Promise<PreflightCheck> {
  const { rows } = await db.query<{ wal_level: string }>('SHOW wal_level');
  const level = rows[0]?.wal_level ?? 'unknown';
  return level === 'logical'
    ? { name: 'wal_level', ok: true, detail: 'wal_level is logical' }
    : {
        name: 'wal_level',
        ok: false,
        detail:
          `wal_level is ${level}, WAL mode needs logical: run ALTER SYSTEM SET wal_level = logical; and restart ` +
          'PostgreSQL (managed services: set the logical replication parameter), or use --mode=poll',
      };
}

async function checkReplicationRole(db: Db): Promise<PreflightCheck> {
  const { rows } = await db.query<{ role: string; allowed: boolean }>(
    `SELECT current_user AS role,
            r.rolsuper OR r.rolreplication
              OR EXISTS (SELECT 1 FROM pg_roles m
                          WHERE m.rolname IN ('rds_replication', 'azure_pg_admin', 'cloudsqlsuperuser')
                            AND pg_has_role(current_user, m.oid, 'member')) AS allowed
       FROM pg_roles r WHERE r.rolname = current_user`,
  );
  const row = rows[0];
  const role = row?.role ?? 'current_user';
  return row?.allowed === true
    ? { name: 'replication privilege', ok: true, detail: `role ${role} may use replication` }
    : {
        name: 'replication privilege',
        ok: false,
        detail:
          `role ${role} lacks the REPLICATION attribute: run ALTER ROLE ${quoteIdentifier(role)} REPLICATION; ` +
          '(on Amazon RDS: GRANT rds_replication TO the role)',
      };
}

async function checkTable(db: Db, names: PreflightNames): Promise<PreflightCheck> {
  const table = quoteQualified(names.schema, names.table);
  const { rows } = await db.query<{ column_name: string; data_type: string }>(
    'SELECT column_name, data_type FROM information_schema.columns WHERE table_schema = $1 AND table_name = $2',
    [names.schema, names.table],
  );
  if (rows.length === 0) {
    return {
      name: 'outbox table',
      ok: false,
      detail: `table ${table} does not exist: run walbox migrate (with the same --schema and --table)`,
    };
  }
  const types = new Map(rows.map((r) => [r.column_name, r.data_type]));
  const missing = listRequiredColumns(names.columns).filter((c) => !types.has(c));
  if (missing.length > 0) {
    return {
      name: 'outbox table',
      ok: false,
      detail:
        `table ${table} lacks column ${missing.join(', ')}: run walbox migrate (with the same --outbox-shape), ` +
        'or name the right columns with the --*-column options',
    };
  }
  const wrong = explainColumnTypes(names.columns, types);
  return wrong === undefined
    ? { name: 'outbox table', ok: true, detail: `table ${table} has every column walbox needs` }
    : { name: 'outbox table', ok: false, detail: `table ${table}: ${wrong}` };
}

/**
 * The types walbox can read each configured column as. Values travel as text, read from the WAL (the type's output)
 * or from the table (`::text`): only types whose two texts are the same give the same key, header and topic on
 * both paths (a boolean is `t` in one and `true` in the other; char(n) loses its padding in one).
 */
const TEXT_TYPES = ['text', 'character varying', 'uuid', 'smallint', 'integer', 'bigint', 'numeric'];
const COLUMN_TYPES: Readonly<
  Record<'id' | 'payload' | 'timestamp' | 'key' | 'routing' | 'event-type' | 'header', readonly string[]>
> = {
  // ids travel as uuid[] parameters
  id: ['uuid'],
  // the value is the column's text: bytea would arrive as hex, not as the bytes
  payload: ['jsonb', 'json', 'text', 'character varying'],
  timestamp: ['timestamp with time zone', 'timestamp without time zone', 'bigint'],
  key: TEXT_TYPES,
  routing: TEXT_TYPES,
  'event-type': TEXT_TYPES,
  header: [...TEXT_TYPES, 'jsonb', 'json'],
};

function explainColumnTypes(columns: OutboxColumns, types: ReadonlyMap<string, string>): string | undefined {
  const checked: [keyof typeof COLUMN_TYPES, string][] = [
    ['id', columns.id],
    ['payload', columns.payload],
    ['timestamp', columns.timestamp],
    ['key', columns.aggregateId],
    ['routing', columns.aggregateType],
    ['event-type', columns.eventType],
    ...columns.headerColumns.map((h): [keyof typeof COLUMN_TYPES, string] => ['header', h.column]),
  ];
  for (const [role, column] of checked) {
    const type = types.get(column);
    const allowed = COLUMN_TYPES[role];
    if (type !== undefined && !allowed.includes(type)) {
      const flag = role === 'header' ? '--header-columns' : `--${role}-column`;
      return `column ${column} (${flag}) is ${type}, walbox reads it as one of ${allowed.join(', ')}`;
    }
  }
  return undefined;
}

async function checkTablePrivileges(db: Db, names: PreflightNames): Promise<PreflightCheck> {
  const table = quoteQualified(names.schema, names.table);
  const { rows } = await db.query<{ can_select: boolean; can_update: boolean }>(
    `SELECT has_table_privilege($1, 'SELECT') AS can_select, has_table_privilege($1, 'UPDATE') AS can_update`,
    [table],
  );
  const row = rows[0];
  return row?.can_select === true && row.can_update
    ? { name: 'table privileges', ok: true, detail: `the role may read and update ${table}` }
    : {
        name: 'table privileges',
        ok: false,
        detail: `the role cannot read and update ${table}: run GRANT SELECT, UPDATE ON ${table} TO current_user;`,
      };
}

async function checkSlotFailover(db: Db, setting: SlotFailover): Promise<PreflightCheck> {
  const version = await readServerVersion(db);
  try {
    const failover = decideSlotFailover(setting, version);
    return {
      name: 'slot failover',
      ok: true,
      detail: failover
        ? `a new slot is a failover slot (PostgreSQL ${formatServerVersion(version)}, --slot-failover ${setting})`
        : `no failover slot (PostgreSQL ${formatServerVersion(version)}, --slot-failover ${setting}): a failover loses the slot, walbox recreates it and catches up from the table`,
    };
  } catch (error) {
    return { name: 'slot failover', ok: false, detail: (error as Error).message };
  }
}

async function checkSynchronousStandbys(db: Db, applicationName: string): Promise<PreflightCheck> {
  const { rows } = await db.query<{ names: string }>(
    "SELECT current_setting('synchronous_standby_names') AS names",
  );
  const setting = rows[0]?.names ?? '';
  if (!mayBecomeSynchronousStandby(setting, applicationName)) {
    return {
      name: 'synchronous standbys',
      ok: true,
      detail: setting === '' ? 'no synchronous standbys' : `walbox is not among them (${setting})`,
    };
  }
  return {
    name: 'synchronous standbys',
    ok: false,
    detail:
      `synchronous_standby_names (${setting}) matches walbox's replication connection (application_name ` +
      `${applicationName}): commits would wait for walbox, which waits for its own commits; list the standbys ` +
      'by name (not *), without walbox, or run walbox with another --application-name',
  };
}

async function checkStateTable(db: Db, names: PreflightNames): Promise<PreflightCheck> {
  const state = quoteQualified(names.schema, 'walbox_state');
  const { rows } = await db.query<{ ok: boolean }>('SELECT to_regclass($1) IS NOT NULL AS ok', [state]);
  return rows[0]?.ok === true
    ? { name: 'state table', ok: true, detail: `${state} exists` }
    : { name: 'state table', ok: false, detail: `${state} does not exist: run walbox migrate` };
}

async function checkPublication(db: Db, names: PreflightNames): Promise<PreflightCheck> {
  const publication = quoteIdentifier(names.publication);
  const table = quoteQualified(names.schema, names.table);
  const state = await readPublication(db, names.publication, names.schema, names.table);
  if (state === undefined) {
    return {
      name: 'publication',
      ok: false,
      detail: `publication ${publication} does not exist: run walbox migrate (or pass the right --publication)`,
    };
  }
  const problem = explainPublicationProblem(state, publication, table);
  return problem === undefined
    ? { name: 'publication', ok: true, detail: `publication ${publication} publishes inserts of ${table}` }
    : { name: 'publication', ok: false, detail: problem };
}

async function checkCapacity(db: Db, slot: string): Promise<PreflightCheck[]> {
  const { rows } = await db.query<{ has_slot: boolean; free_slots: number; free_senders: number }>(
    `SELECT EXISTS (SELECT 1 FROM pg_replication_slots WHERE slot_name = $1) AS has_slot,
            current_setting('max_replication_slots')::int - (SELECT count(*) FROM pg_replication_slots)::int AS free_slots,
            current_setting('max_wal_senders')::int - (SELECT count(*) FROM pg_stat_replication)::int AS free_senders`,
    [slot],
  );
  const row = rows[0];
  if (row === undefined) return [];
  const slots: PreflightCheck =
    row.has_slot || row.free_slots > 0
      ? {
          name: 'replication slots',
          ok: true,
          detail: row.has_slot ? `slot ${slot} exists` : `${row.free_slots} slots free`,
        }
      : {
          name: 'replication slots',
          ok: false,
          detail:
            'no replication slot is free: drop an unused one (SELECT pg_drop_replication_slot(name)) or raise ' +
            'max_replication_slots and restart PostgreSQL',
        };
  const senders: PreflightCheck =
    row.free_senders > 0
      ? { name: 'wal senders', ok: true, detail: `${row.free_senders} wal senders free` }
      : {
          name: 'wal senders',
          ok: false,
          detail:
            'every wal sender is busy: raise max_wal_senders and restart PostgreSQL, or stop an idle replication client',
        };
  return [slots, senders];
}
