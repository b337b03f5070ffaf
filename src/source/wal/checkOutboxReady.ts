import type pg from 'pg';

import { PreconditionError } from '../../errors.js';
import { quoteIdentifier, quoteQualified } from '../../db/quoteIdentifier.js';
import { explainPublicationProblem, readPublication } from '../../db/readPublication.js';
import { REQUIRED_COLUMNS } from '../../outbox/outboxColumns.js';

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
  const found = await readPublication(db, names.publication, names.schema, names.table);
  if (found === undefined) {
    throw new PreconditionError(
      `publication ${publication} does not exist: run walbox migrate (or pass --publication)`,
    );
  }
  const problem = explainPublicationProblem(found, publication, table);
  if (problem !== undefined) throw new PreconditionError(problem);
}
