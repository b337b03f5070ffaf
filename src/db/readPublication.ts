import type pg from 'pg';

export interface PublicationState {
  readonly publishesInserts: boolean;
  readonly includesTable: boolean;
}

/** How a publication stands towards the outbox table, or undefined when it does not exist. */
export async function readPublication(
  db: pg.ClientBase | pg.Pool,
  publication: string,
  schema: string,
  table: string,
): Promise<PublicationState | undefined> {
  const { rows } = await db.query<{ pubinsert: boolean; has_table: boolean }>(
    `SELECT p.pubinsert,
            p.puballtables OR EXISTS (SELECT 1 FROM pg_publication_tables t
                                       WHERE t.pubname = p.pubname AND t.schemaname = $2 AND t.tablename = $3)
              AS has_table
       FROM pg_publication p
      WHERE p.pubname = $1`,
    [publication, schema, table],
  );
  const row = rows[0];
  return row === undefined ? undefined : { publishesInserts: row.pubinsert, includesTable: row.has_table };
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
  if (!state.publishesInserts) {
    return `publication ${quotedPublication} does not publish inserts: run ALTER PUBLICATION ${quotedPublication} SET (publish = 'insert'); or choose another --publication`;
  }
  return undefined;
}
