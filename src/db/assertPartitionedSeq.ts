import type pg from 'pg';
import { escapeLiteral } from 'pg';

import { PreconditionError } from '../errors.js';
import { quoteIdentifier, quoteQualified } from './quoteIdentifier.js';

/** PostgreSQL 17 gave partitioned tables identity columns that their partitions share. */
const PARTITIONED_IDENTITY_SINCE = 170_000;

/**
 * SQL that is true when the table named by the text expression `table` (a parameter, or a quoted literal in the
 * --print-sql script) is partitioned, has no seq column, and the server is older than 17.
 */
function renderNeedsSeq(table: string): string {
  return `coalesce((SELECT c.relkind = 'p'
                       AND current_setting('server_version_num')::int < ${String(PARTITIONED_IDENTITY_SINCE)}
                       AND NOT EXISTS (SELECT 1 FROM pg_attribute a
                                        WHERE a.attrelid = c.oid AND a.attname = 'seq' AND NOT a.attisdropped)
                      FROM pg_class c WHERE c.oid = to_regclass(${table})), false)`;
}

function explainMissingSeq(schema: string, tableName: string): string {
  const table = quoteQualified(schema, tableName);
  const sequence = quoteQualified(schema, `${tableName}_seq_seq`);
  return (
    `${table} is partitioned and has no seq column, which PostgreSQL before 17 cannot add as an identity column ` +
    `to a partitioned table: add it as a sequence default, then run walbox migrate again: CREATE SEQUENCE ` +
    `${sequence}; ALTER TABLE ${table} ADD COLUMN seq bigint NOT NULL DEFAULT nextval(${escapeLiteral(sequence)}); ` +
    `ALTER SEQUENCE ${sequence} OWNED BY ${table}.${quoteIdentifier('seq')}; ` +
    '(docs/operations.md, partitioned outbox tables)'
  );
}

/**
 * Migration 000001 adds `seq` as an identity column. Before PostgreSQL 17 a partitioned table cannot get one once it
 * has partitions ("cannot recursively add identity column"), and its partitions never share one: a row inserted
 * into a partition directly would find no value. So on 15 and 16 a partitioned outbox must bring `seq` itself, as
 * a sequence default, which its partitions inherit; this says so, with the statements, before any migration runs.
 */
export async function assertPartitionedSeq(
  client: pg.ClientBase,
  options: { readonly schema: string; readonly table: string },
): Promise<void> {
  const { rows } = await client.query<{ needs_seq: boolean }>(`SELECT ${renderNeedsSeq('$1')} AS needs_seq`, [
    quoteQualified(options.schema, options.table),
  ]);
  if (rows[0]?.needs_seq === true) {
    throw new PreconditionError(explainMissingSeq(options.schema, options.table));
  }
}

/** The same check as a statement of the --print-sql script: it stops the script before any migration. */
export function renderPartitionedSeqCheck(options: {
  readonly schema: string;
  readonly table: string;
}): string {
  const table = escapeLiteral(quoteQualified(options.schema, options.table));
  return `DO $walbox$ BEGIN
  IF ${renderNeedsSeq(table)} THEN
    RAISE EXCEPTION '%', ${escapeLiteral(explainMissingSeq(options.schema, options.table))};
  END IF;
END $walbox$;`;
}
