import type pg from 'pg';

import { PreconditionError } from '../errors.js';
import { quoteIdentifier, quoteQualified } from './quoteIdentifier.js';

/**
 * SQL that is true when the table named by the text expression `table` is partitioned. The expressions are
 * parameters (`migrate`) or quoted literals (`migrate --print-sql`): one text for both.
 */
export function renderIsPartitioned(table: string): string {
  return `coalesce((SELECT relkind = 'p' FROM pg_class WHERE oid = to_regclass(${table})), false)`;
}

/**
 * SQL that is true when publication `publication` is walbox's own kind for `table`: it lists that table and
 * nothing else (no FOR ALL TABLES, no FOR TABLES IN SCHEMA). Only such a publication does migrate change.
 */
export function renderIsOwnPublication(publication: string, table: string): string {
  return `EXISTS (SELECT 1 FROM pg_publication p
                  WHERE p.pubname = ${publication} AND NOT p.puballtables
                    AND NOT EXISTS (SELECT 1 FROM pg_publication_namespace n WHERE n.pnpubid = p.oid)
                    AND ARRAY(SELECT r.prrelid FROM pg_publication_rel r WHERE r.prpubid = p.oid)
                        = ARRAY[to_regclass(${table})::oid])`;
}

/**
 * SQL listing (as text[]) the replication slots walbox_state records for the outbox table named `tableName`
 * (a text expression) that still exist.
 */
export function renderLiveSlots(schema: string, tableName: string): string {
  return `ARRAY(SELECT s.slot FROM ${quoteQualified(schema, 'walbox_state')} s
                 JOIN pg_replication_slots r ON r.slot_name = s.slot
                WHERE s.outbox_table = ${tableName} ORDER BY 1)`;
}

/** Why migrate will not switch a publication whose slot exists: the message of both migrate and the script. */
export function explainLiveSlots(publication: string, table: string, slots: string): string {
  return (
    `publication ${quoteIdentifier(publication)} publishes the partitions of ${table} under their own names and ` +
    `replication slot ${slots} may hold inserts published that way, which walbox would skip (they would stay ` +
    'pending): stop the relays, run walbox slot drop (the next walbox run recreates the slot and delivers every ' +
    'pending row from the table), then run walbox migrate again'
  );
}

/**
 * Turns publish_via_partition_root on for walbox's own publication of a partitioned outbox (created before the
 * table was partitioned, or by an older walbox): without it pgoutput sends the partitions' names, which walbox does
 * not take for the outbox. A publication shared with other tables is reported with the fix instead (its other
 * subscribers may expect partition names), and so is a walbox slot that already exists: the inserts it holds were
 * published under the partitions' names and would never be delivered from it.
 */
export async function publishViaPartitionRoot(
  client: pg.ClientBase,
  options: { readonly schema: string; readonly table: string; readonly publication: string },
  problem: string,
): Promise<void> {
  const table = quoteQualified(options.schema, options.table);
  const { rows } = await client.query<{ own: boolean; slots: string[] }>(
    `SELECT ${renderIsOwnPublication('$1', '$2')} AS own, ${renderLiveSlots(options.schema, '$3')} AS slots`,
    [options.publication, table, options.table],
  );
  const row = rows[0];
  if (row?.own !== true) throw new PreconditionError(problem);
  if (row.slots.length > 0) {
    throw new PreconditionError(explainLiveSlots(options.publication, table, row.slots.join(', ')));
  }
  await client.query(
    `ALTER PUBLICATION ${quoteIdentifier(options.publication)} SET (publish_via_partition_root = true)`,
  );
}
