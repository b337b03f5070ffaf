import type pg from 'pg';

import { PreconditionError, toError } from '../errors.js';
import { describeOldRows } from './deleteProcessedRows.js';
import { quoteQualified } from './quoteIdentifier.js';
import { SQLSTATE, errorCodeOf } from './sqlState.js';

export interface DropPartitionsOptions {
  readonly schema: string;
  readonly table: string;
  readonly olderThanMs: number;
  readonly includeDeadLetters: boolean;
  /** How long to wait for the outbox's lock before leaving a partition for the next run. */
  readonly lockTimeoutMs: number;
}

export interface PartitionOutcome {
  /** The partition, schema-qualified and quoted. */
  readonly partition: string;
  readonly rows: number;
  /** Why a partition whose range lies before the cutoff was kept (absent for dropped ones). */
  readonly reason?: string;
}

export interface DropPartitionsResult {
  readonly dropped: readonly PartitionOutcome[];
  readonly kept: readonly PartitionOutcome[];
}

/** The upper bound of a range partition on one column, from pg_get_expr(relpartbound): FROM (…) TO ('…'). */
const UPPER_BOUND = "TO \\('([^']*)'\\)$";

/**
 * Drops the partitions of a partitioned outbox (RANGE on created_at) that cleanup row by row would empty: their
 * range ends before the cutoff, so no new row goes there, and every row in them was processed (with
 * `includeDeadLetters`: or dead-lettered) more than `olderThanMs` ago. The default partition is never dropped.
 *
 * Each partition is first read without blocking anyone (the long part: a scan of the partition); the drop then
 * runs in its own short transaction that locks the outbox and the partition (ACCESS EXCLUSIVE, as DROP needs:
 * writers and relays wait for it) and checks again, by the partial indexes, that no pending row and no dead letter
 * it must keep arrived in between. The outbox is locked before the partition, in the order every query on the
 * outbox takes them, so the drop cannot deadlock with a relay; a lock not granted within `lockTimeoutMs` leaves
 * the partition for the next run rather than stall the writers queued behind the request.
 */
export async function dropProcessedPartitions(
  client: pg.ClientBase,
  options: DropPartitionsOptions,
): Promise<DropPartitionsResult> {
  const outbox = quoteQualified(options.schema, options.table);
  await assertRangeOnCreatedAt(client, outbox);
  const { rows: partitions } = await client.query<{ name: string; expired: boolean }>(
    `SELECT quote_ident(n.nspname) || '.' || quote_ident(c.relname) AS name,
            coalesce(substring(pg_get_expr(c.relpartbound, c.oid) FROM $2)::timestamptz
                       <= now() - $3 * interval '1 millisecond', false) AS expired
       FROM pg_inherits i
       JOIN pg_class c ON c.oid = i.inhrelid
       JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE i.inhparent = to_regclass($1) AND c.relkind IN ('r', 'p')
      ORDER BY substring(pg_get_expr(c.relpartbound, c.oid) FROM $2)::timestamptz NULLS LAST, 1`,
    [outbox, UPPER_BOUND, options.olderThanMs],
  );
  const old = describeOldRows(options.includeDeadLetters, '$1');
  const dropped: PartitionOutcome[] = [];
  const kept: PartitionOutcome[] = [];
  for (const { name: partition } of partitions.filter((p) => p.expired)) {
    const content = await readPartitionContent(client, partition, old, options.olderThanMs);
    const reason = explainKeeping(content, options.includeDeadLetters);
    if (reason !== undefined) {
      kept.push({ partition, rows: content.rows, reason });
      continue;
    }
    const refused = await dropPartition(client, outbox, partition, old, options);
    if (refused === undefined) dropped.push({ partition, rows: content.rows });
    else kept.push({ partition, rows: content.rows, reason: refused });
  }
  return { dropped, kept };
}

async function assertRangeOnCreatedAt(client: pg.ClientBase, outbox: string): Promise<void> {
  const { rows } = await client.query<{ partitioned: boolean; strategy: string | null; key: string | null }>(
    `SELECT c.relkind = 'p' AS partitioned, pt.partstrat::text AS strategy,
            CASE WHEN pt.partnatts = 1 THEN a.attname::text END AS key
       FROM pg_class c
       LEFT JOIN pg_partitioned_table pt ON pt.partrelid = c.oid
       LEFT JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = pt.partattrs[0]
      WHERE c.oid = to_regclass($1)`,
    [outbox],
  );
  const row = rows[0];
  if (row === undefined) throw new PreconditionError(`table ${outbox} does not exist: run walbox migrate`);
  if (!row.partitioned) {
    throw new PreconditionError(
      `--drop-partitions: ${outbox} is not partitioned: run walbox cleanup without --drop-partitions`,
    );
  }
  if (row.strategy !== 'r' || row.key !== 'created_at') {
    throw new PreconditionError(
      `--drop-partitions needs ${outbox} partitioned BY RANGE (created_at), which tells which partitions hold ` +
        'only old rows: run walbox cleanup without --drop-partitions to delete rows instead',
    );
  }
}

interface PartitionContent {
  readonly rows: number;
  readonly pending: number;
  /** Dead letters cleanup must keep: all of them, or with --include-dead-letters the recent ones. */
  readonly deadLetters: number;
  /** Processed rows processed within the last `olderThanMs`. */
  readonly recent: number;
}

async function readPartitionContent(
  client: pg.ClientBase,
  partition: string,
  old: string,
  olderThanMs: number,
): Promise<PartitionContent> {
  const { rows } = await client.query<Record<keyof PartitionContent, string>>(
    `SELECT count(*)::text AS rows,
            count(*) FILTER (WHERE processed_at IS NULL AND dead_lettered_at IS NULL)::text AS pending,
            count(*) FILTER (WHERE processed_at IS NULL AND dead_lettered_at IS NOT NULL
                               AND (${old}) IS NOT TRUE)::text AS "deadLetters",
            count(*) FILTER (WHERE processed_at IS NOT NULL AND (${old}) IS NOT TRUE)::text AS recent
       FROM ${partition}`,
    [olderThanMs],
  );
  const row = rows[0];
  return {
    rows: Number(row?.rows ?? 0),
    pending: Number(row?.pending ?? 0),
    deadLetters: Number(row?.deadLetters ?? 0),
    recent: Number(row?.recent ?? 0),
  };
}

function explainKeeping(content: PartitionContent, includeDeadLetters: boolean): string | undefined {
  const reasons = [
    content.pending > 0 ? `${String(content.pending)} pending` : '',
    content.deadLetters > 0
      ? `${String(content.deadLetters)} dead-lettered${includeDeadLetters ? ' within --older-than' : ' (--include-dead-letters drops them)'}`
      : '',
    content.recent > 0 ? `${String(content.recent)} processed within --older-than` : '',
  ].filter((r) => r !== '');
  return reasons.length === 0 ? undefined : `holds ${reasons.join(', ')}`;
}

/** Drops one partition under the locks, or returns why it did not. */
async function dropPartition(
  client: pg.ClientBase,
  outbox: string,
  partition: string,
  old: string,
  options: DropPartitionsOptions,
): Promise<string | undefined> {
  await client.query('BEGIN');
  try {
    // SET LOCAL takes no parameters; the value is an integer of ours.
    await client.query(`SET LOCAL lock_timeout = ${String(Math.max(1, Math.round(options.lockTimeoutMs)))}`);
    await client.query(`LOCK TABLE ONLY ${outbox} IN ACCESS EXCLUSIVE MODE`);
    // Without ONLY: a partition that is partitioned itself is locked with its own partitions.
    await client.query(`LOCK TABLE ${partition} IN ACCESS EXCLUSIVE MODE`);
    // Rows that arrived since the first look: pending ones and dead letters are found by the partial indexes.
    const { rows } = await client.query<{ pending: boolean; dead: boolean }>(
      `SELECT EXISTS (SELECT 1 FROM ${partition} WHERE processed_at IS NULL AND dead_lettered_at IS NULL) AS pending,
              EXISTS (SELECT 1 FROM ${partition} WHERE dead_lettered_at IS NOT NULL AND processed_at IS NULL
                         AND (${old}) IS NOT TRUE) AS dead`,
      [options.olderThanMs],
    );
    if (rows[0]?.pending !== false || rows[0].dead) {
      await client.query('ROLLBACK');
      return 'a pending row or a dead letter arrived while it was read: run cleanup again';
    }
    await client.query(`DROP TABLE ${partition}`);
    await client.query('COMMIT');
    return undefined;
  } catch (thrown) {
    await client.query('ROLLBACK').catch(() => undefined);
    const code = errorCodeOf(thrown);
    if (code === SQLSTATE.LOCK_NOT_AVAILABLE) {
      return `its lock was not granted within ${String(options.lockTimeoutMs)} ms (a long transaction on the outbox?): run cleanup again`;
    }
    if (code === SQLSTATE.INSUFFICIENT_PRIVILEGE) {
      throw new PreconditionError(
        `dropping partition ${partition}: ${toError(thrown).message}: run cleanup --drop-partitions as the owner of the outbox and its partitions`,
        { cause: thrown },
      );
    }
    throw thrown;
  }
}
