import type pg from 'pg';

import { PreconditionError } from '../../errors.js';
import { quoteIdentifier, quoteQualified } from '../../db/quoteIdentifier.js';

const REQUIRED_COLUMNS = [
  'id',
  'aggregate_type',
  'aggregate_id',
  'event_type',
  'payload',
  'headers',
  'created_at',
  'processed_at',
  'dead_lettered_at',
  'last_error',
  'attempts',
  'seq',
];

/**
 * The minimum WAL mode needs before it touches a slot: wal_level=logical, the migrated table, the state table
 * and a publication that publishes its inserts. Each failure is one PreconditionError with the fix.
 */
export async function checkOutboxReady(
  db: pg.Pool | pg.ClientBase,
  names: { readonly schema: string; readonly table: string; readonly publication: string },
): Promise<void> {
  const table = quoteQualified(names.schema, names.table);
  const { rows: levels } = await db.query<{ wal_level: string }>('SHOW wal_level');
  const walLevel = levels[0]?.wal_level;
  if (walLevel !== 'logical') {
    throw new PreconditionError(
      `wal_level is ${walLevel ?? 'unknown'}, WAL mode needs logical: run ALTER SYSTEM SET wal_level = logical; ` +
        'and restart PostgreSQL (or use --mode=poll)',
    );
  }
  const { rows: columns } = await db.query<{ column_name: string }>(
    `SELECT column_name FROM information_schema.columns WHERE table_schema = $1 AND table_name = $2`,
    [names.schema, names.table],
  );
  if (columns.length === 0) {
    throw new PreconditionError(
      `table ${table} does not exist: run walbox migrate (with the same --schema/--table)`,
    );
  }
  const present = new Set(columns.map((c) => c.column_name));
  const missing = REQUIRED_COLUMNS.filter((c) => !present.has(c));
  if (missing.length > 0) {
    throw new PreconditionError(`table ${table} lacks column ${missing.join(', ')}: run walbox migrate`);
  }
  const { rows: state } = await db.query<{ ok: boolean }>(`SELECT to_regclass($1) IS NOT NULL AS ok`, [
    quoteQualified(names.schema, 'walbox_state'),
  ]);
  if (state[0]?.ok !== true) {
    throw new PreconditionError(
      `${quoteQualified(names.schema, 'walbox_state')} does not exist: run walbox migrate`,
    );
  }
  const publication = quoteIdentifier(names.publication);
  const { rows: publications } = await db.query<{ pubinsert: boolean; has_table: boolean }>(
    `SELECT p.pubinsert,
            p.puballtables OR EXISTS (SELECT 1 FROM pg_publication_tables t
                                       WHERE t.pubname = p.pubname AND t.schemaname = $2 AND t.tablename = $3)
              AS has_table
       FROM pg_publication p WHERE p.pubname = $1`,
    [names.publication, names.schema, names.table],
  );
  const found = publications[0];
  if (found === undefined) {
    throw new PreconditionError(
      `publication ${publication} does not exist: run walbox migrate (or pass --publication)`,
    );
  }
  if (!found.has_table) {
    throw new PreconditionError(
      `publication ${publication} does not include ${table}: run ALTER PUBLICATION ${publication} ADD TABLE ${table};`,
    );
  }
  if (!found.pubinsert) {
    throw new PreconditionError(
      `publication ${publication} does not publish inserts: run ALTER PUBLICATION ${publication} SET (publish = 'insert');`,
    );
  }
}
