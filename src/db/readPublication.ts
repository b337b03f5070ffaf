import type pg from 'pg';

export interface PublicationState {
  readonly publishesInserts: boolean;
  readonly includesTable: boolean;
  /** A row filter (WHERE) on the table: rows it leaves out would never be streamed. */
  readonly filtersRows: boolean;
  /** A column list on the table: the columns left out would arrive missing. */
  readonly listsColumns: boolean;
  /** The table is partitioned and its changes are published under the partitions' names. */
  readonly publishesPartitions: boolean;
}

/** How a publication stands towards the outbox table, or undefined when it does not exist. */
export async function readPublication(
  db: pg.ClientBase | pg.Pool,
  publication: string,
  schema: string,
  table: string,
): Promise<PublicationState | undefined> {
  // Row filters and column lists exist from PostgreSQL 15 on, as every supported version has them.
  const { rows } = await db.query<{
    pubinsert: boolean;
    has_table: boolean;
    row_filter: boolean;
    column_list: boolean;
    partitions: boolean;
  }>(
    `SELECT p.pubinsert,
            p.puballtables
              OR EXISTS (SELECT 1 FROM pg_publication_tables t
                          WHERE t.pubname = p.pubname AND t.schemaname = $2 AND t.tablename = $3)
              -- A partitioned table published under its partitions' names is listed by them, not by itself.
              OR EXISTS (SELECT 1 FROM pg_publication_rel r WHERE r.prpubid = p.oid AND r.prrelid = c.oid)
              OR EXISTS (SELECT 1 FROM pg_publication_namespace n
                          WHERE n.pnpubid = p.oid AND n.pnnspid = c.relnamespace)
              AS has_table,
            EXISTS (SELECT 1 FROM pg_publication_tables t
                     WHERE t.pubname = p.pubname AND t.schemaname = $2 AND t.tablename = $3
                       AND t.rowfilter IS NOT NULL) AS row_filter,
            EXISTS (SELECT 1 FROM pg_publication_rel r
                     WHERE r.prpubid = p.oid AND r.prrelid = c.oid AND r.prattrs IS NOT NULL) AS column_list,
            coalesce(c.relkind = 'p' AND NOT p.pubviaroot, false) AS partitions
       FROM pg_publication p
       LEFT JOIN pg_class c
         ON c.relname = $3 AND c.relnamespace = (SELECT oid FROM pg_namespace WHERE nspname = $2)
      WHERE p.pubname = $1`,
    [publication, schema, table],
  );
  const row = rows[0];
  return row === undefined
    ? undefined
    : {
        publishesInserts: row.pubinsert,
        includesTable: row.has_table,
        filtersRows: row.row_filter,
        listsColumns: row.column_list,
        publishesPartitions: row.partitions,
      };
}

/** The one-line fix for a publication that exists but does not serve the outbox, or undefined when it does. */
export function explainPublicationProblem(
  state: PublicationState,
  quotedPublication: string,
  quotedTable: string,
): string | undefined {
  if (!state.includesTable) {
    return `publication ${quotedPublication} does not include ${quotedTable}: run ALTER PUBLICATION ${quotedPublication} ADD TABLE ${quotedTable}; or choose another --publication`;
  }
  if (state.filtersRows || state.listsColumns) {
    const what = state.filtersRows ? 'filters the rows' : 'lists only some columns';
    return `publication ${quotedPublication} ${what} of ${quotedTable}: walbox needs every row and column; run ALTER PUBLICATION ${quotedPublication} SET TABLE ${quotedTable}; or choose another --publication`;
  }
  if (state.publishesPartitions) {
    return `${quotedTable} is partitioned and publication ${quotedPublication} publishes its rows under the partitions' names, which walbox would not recognise: run ALTER PUBLICATION ${quotedPublication} SET (publish_via_partition_root = true)`;
  }
  if (!state.publishesInserts) {
    return `publication ${quotedPublication} does not publish inserts: run ALTER PUBLICATION ${quotedPublication} SET (publish = 'insert'); or choose another --publication`;
  }
  return undefined;
}
