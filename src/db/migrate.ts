import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

import type pg from 'pg';

import { MigrationError, PreconditionError, toError } from '../errors.js';
import { deriveOutboxNames, type OutboxNames } from '../outbox/outboxNames.js';
import { DEFAULT_COLUMNS, type OutboxColumns } from '../outbox/outboxColumns.js';
import { findSqlDir } from './findSqlDir.js';
import { explainPublicationProblem, readPublication } from './readPublication.js';
import { assertPartitionedSeq, renderPartitionedSeqCheck } from './assertPartitionedSeq.js';
import {
  explainLiveSlots,
  publishViaPartitionRoot,
  renderIsOwnPublication,
  renderIsPartitioned,
  renderLiveSlots,
} from './publishViaPartitionRoot.js';
import { escapeLiteral } from 'pg';

import { quoteIdentifier, quoteQualified } from './quoteIdentifier.js';
import { SQLSTATE, errorCodeOf } from './sqlState.js';

export interface MigrateOptions {
  readonly schema: string;
  readonly table: string;
  readonly publication: string;
  /** The event columns' names (default: walbox's): a new table gets them, an existing one must have them. */
  readonly columns?: OutboxColumns;
  /** Also (or only, with outbox: false) create the consumer side: processed_events. */
  readonly consumer?: boolean;
  readonly outbox?: boolean;
  /** true installs the poll mode's NOTIFY trigger, false removes it, undefined leaves it as it is. */
  readonly notifyTrigger?: boolean;
  readonly sqlDir?: string;
}

export interface MigrateResult {
  readonly applied: readonly string[];
  readonly alreadyApplied: number;
  /** updated: publish_via_partition_root turned on for a partitioned outbox (publishViaPartitionRoot). */
  readonly publication: 'created' | 'unchanged' | 'updated' | 'skipped';
}

interface Migration {
  readonly id: number;
  readonly name: string;
  readonly text: string;
  readonly checksum: string;
}

/** Serialises migrate runs database-wide: schemas and publications are created under it. */
const MIGRATE_LOCK_KEY = 'walbox.migrate';

/**
 * Applies the numbered migrations in sql/ (and sql/consumer/) that are not yet recorded, then makes sure the
 * publication exists. Everything runs in one transaction under an advisory lock, so concurrent runs queue up
 * and the later ones find nothing to do.
 */
export async function migrate(client: pg.ClientBase, options: MigrateOptions): Promise<MigrateResult> {
  const names = deriveOutboxNames(options.schema, options.table, options.columns);
  const sqlDir = options.sqlDir ?? findSqlDir();
  const sets: { target: string; migrations: Migration[] }[] = [];
  if (options.outbox !== false)
    sets.push({ target: `outbox:${names.table}`, migrations: loadMigrations(sqlDir) });
  if (options.consumer === true) {
    sets.push({ target: 'consumer', migrations: loadMigrations(join(sqlDir, 'consumer')) });
  }

  await client.query('BEGIN');
  try {
    await client.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [MIGRATE_LOCK_KEY]);
    await ensureSchema(client, names.schema);
    await client.query(
      `CREATE TABLE IF NOT EXISTS ${quoteQualified(names.schema, names.migrationsTable)} (
         target     text        NOT NULL,
         id         int         NOT NULL,
         name       text        NOT NULL,
         checksum   text        NOT NULL,
         applied_at timestamptz NOT NULL DEFAULT now(),
         PRIMARY KEY (target, id))`,
    );
    const applied: string[] = [];
    let alreadyApplied = 0;
    if (options.outbox !== false) await assertPartitionedSeq(client, names);
    for (const set of sets) {
      const done = await readApplied(client, names, set.target);
      for (const migration of set.migrations) {
        const checksum = done.get(migration.id);
        if (checksum !== undefined) {
          if (checksum !== migration.checksum) {
            throw new MigrationError(
              `migration ${migration.name} changed after it was applied to ${set.target}; released migrations ` +
                'are immutable: restore the file and put the change in a new one',
            );
          }
          alreadyApplied++;
          continue;
        }
        if (migration.id === 1 && set.target.startsWith('outbox:')) {
          await applyAdoption(client, names, sqlDir);
        }
        await applyMigration(client, names, set.target, migration);
        applied.push(migration.name);
      }
      const newest = set.migrations.at(-1)?.id ?? 0;
      const unknown = [...done.keys()].filter((id) => id > newest);
      if (unknown.length > 0) {
        throw new PreconditionError(
          `${set.target} has migration ${Math.max(...unknown)} applied, newer than this walbox knows (${newest}): ` +
            'upgrade walbox',
        );
      }
    }
    const publication =
      options.outbox === false ? 'skipped' : await ensurePublication(client, names, options);
    if (options.outbox !== false && options.notifyTrigger !== undefined) {
      await setNotifyTrigger(client, names, sqlDir, options.notifyTrigger);
      if (options.notifyTrigger) applied.push('notify trigger');
    }
    await client.query('COMMIT');
    return { applied, alreadyApplied, publication };
  } catch (thrown) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw wrapMigrationError(thrown, names);
  }
}

/**
 * What `migrate` does, as one SQL script, for teams whose DDL lives in Flyway, Liquibase, Prisma or Rails
 * migrations (`walbox migrate --print-sql`). It records each migration in walbox's migrations table as `migrate`
 * does, so a later `walbox migrate` (or `walbox run`'s checks) finds the schema as it expects; like `migrate`, it
 * is safe to run twice.
 */
export function renderMigrationScript(options: MigrateOptions): string {
  const names = deriveOutboxNames(options.schema, options.table, options.columns);
  const sqlDir = options.sqlDir ?? findSqlDir();
  const migrations = quoteQualified(names.schema, names.migrationsTable);
  const parts = [
    `-- walbox ${options.outbox === false ? 'consumer side' : `outbox ${names.schema}.${names.table}`}: generated by walbox migrate --print-sql`,
    'BEGIN;',
    `SELECT pg_advisory_xact_lock(hashtextextended(${escapeLiteral(MIGRATE_LOCK_KEY)}, 0));`,
    `CREATE SCHEMA IF NOT EXISTS ${quoteIdentifier(names.schema)};`,
    `CREATE TABLE IF NOT EXISTS ${migrations} (
    target     text        NOT NULL,
    id         int         NOT NULL,
    name       text        NOT NULL,
    checksum   text        NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (target, id));`,
  ];
  const sets: { target: string; migrations: Migration[] }[] = [];
  if (options.outbox !== false)
    sets.push({ target: `outbox:${names.table}`, migrations: loadMigrations(sqlDir) });
  if (options.consumer === true)
    sets.push({ target: 'consumer', migrations: loadMigrations(join(sqlDir, 'consumer')) });
  if (options.outbox !== false) {
    parts.push(
      '-- a partitioned outbox on PostgreSQL 15/16 needs its own seq',
      renderPartitionedSeqCheck(names),
    );
  }
  for (const set of sets) {
    for (const migration of set.migrations) {
      if (migration.id === 1 && set.target.startsWith('outbox:')) {
        parts.push('-- adopting an existing table (a no-op otherwise)', renderAdoption(names, sqlDir));
      }
      parts.push(
        `-- ${migration.name}`,
        renderSql(migration.text, names).trim(),
        `INSERT INTO ${migrations} (target, id, name, checksum) VALUES (${escapeLiteral(set.target)}, ${String(migration.id)}, ` +
          `${escapeLiteral(migration.name)}, ${escapeLiteral(migration.checksum)}) ON CONFLICT DO NOTHING;`,
      );
    }
  }
  if (options.outbox !== false) {
    const table = quoteQualified(names.schema, names.table);
    const publication = quoteIdentifier(options.publication);
    const pubname = escapeLiteral(options.publication);
    const partitioned = renderIsPartitioned(escapeLiteral(table));
    parts.push(
      '-- the publication WAL mode streams from (INSERTs of the outbox table only; a partitioned outbox under its own name)',
      `DO $walbox$
DECLARE
  walbox_slots text[];
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_publication WHERE pubname = ${pubname}) THEN
    IF ${partitioned} THEN
      CREATE PUBLICATION ${publication} FOR TABLE ${table} WITH (publish = 'insert', publish_via_partition_root = true);
    ELSE
      CREATE PUBLICATION ${publication} FOR TABLE ${table} WITH (publish = 'insert');
    END IF;
  ELSIF ${partitioned}
        AND NOT (SELECT pubviaroot FROM pg_publication WHERE pubname = ${pubname})
        AND ${renderIsOwnPublication(pubname, escapeLiteral(table))} THEN
    walbox_slots := ${renderLiveSlots(names.schema, escapeLiteral(names.table))};
    IF cardinality(walbox_slots) > 0 THEN
      RAISE EXCEPTION ${escapeLiteral(explainLiveSlots(options.publication, table, '%'))}, array_to_string(walbox_slots, ', ');
    END IF;
    ALTER PUBLICATION ${publication} SET (publish_via_partition_root = true);
  END IF;
END $walbox$;`,
    );
    if (options.notifyTrigger === true) {
      parts.push(
        '-- poll mode wake-up (--notify-trigger)',
        renderSql(readFileSync(join(sqlDir, 'optional', 'notify_trigger.sql'), 'utf8'), names).trim(),
      );
    }
  }
  parts.push('COMMIT;');
  return `${parts.join('\n\n')}\n`;
}

function loadMigrations(dir: string): Migration[] {
  const files = readdirSync(dir)
    .filter((f) => /^\d{6}_[a-z0-9_]+\.sql$/.test(f))
    .sort();
  return files.map((name, index) => {
    const id = Number(name.slice(0, 6));
    if (id !== index + 1)
      throw new MigrationError(`sql migrations in ${dir} are not numbered 1, 2, 3…: ${name}`);
    const text = readFileSync(join(dir, name), 'utf8');
    return { id, name, text, checksum: checksumMigration(text) };
  });
}

/**
 * The checksum of a migration as written for walbox's own column names: a column placeholder counts as the
 * default name it stands for. So a migration that gained placeholders keeps the checksum it was released with,
 * and the same file applied to tables of another shape is still recognised as the same migration.
 */
export function checksumMigration(text: string): string {
  const asReleased = text.replace(/\{\{(\w+)\}\}/g, (match, key: string) =>
    key in COLUMN_PLACEHOLDERS ? COLUMN_PLACEHOLDERS[key as ColumnPlaceholder](DEFAULT_COLUMNS) : match,
  );
  return createHash('sha256').update(asReleased).digest('hex');
}

/** Migration placeholders that name an event column, and the column each stands for. */
type ColumnPlaceholder = 'id' | 'aggregate_type' | 'aggregate_id' | 'event_type' | 'payload';
const COLUMN_PLACEHOLDERS: Readonly<Record<ColumnPlaceholder, (columns: OutboxColumns) => string>> = {
  id: (c) => c.id,
  aggregate_type: (c) => c.aggregateType,
  aggregate_id: (c) => c.aggregateId,
  event_type: (c) => c.eventType,
  payload: (c) => c.payload,
};

/** The bookkeeping columns an adopted table lacks, added before the first migration (sql/optional/adopt_table.sql). */
function renderAdoption(names: OutboxNames, sqlDir: string): string {
  return renderSql(readFileSync(join(sqlDir, 'optional', 'adopt_table.sql'), 'utf8'), names).trim();
}

async function applyAdoption(client: pg.ClientBase, names: OutboxNames, sqlDir: string): Promise<void> {
  try {
    await client.query(renderAdoption(names, sqlDir));
  } catch (thrown) {
    throw wrapMigrationError(thrown, names, 'adopt_table.sql');
  }
}

async function ensureSchema(client: pg.ClientBase, schema: string): Promise<void> {
  const { rowCount } = await client.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [schema]);
  // Checked first so that a role without CREATE on the database can migrate an existing schema.
  if (rowCount === 0) await client.query(`CREATE SCHEMA ${quoteIdentifier(schema)}`);
}

async function readApplied(
  client: pg.ClientBase,
  names: OutboxNames,
  target: string,
): Promise<Map<number, string>> {
  const { rows } = await client.query<{ id: number; checksum: string }>(
    `SELECT id, checksum FROM ${quoteQualified(names.schema, names.migrationsTable)} WHERE target = $1`,
    [target],
  );
  return new Map(rows.map((r) => [r.id, r.checksum]));
}

async function applyMigration(
  client: pg.ClientBase,
  names: OutboxNames,
  target: string,
  migration: Migration,
): Promise<void> {
  try {
    await client.query(renderSql(migration.text, names));
  } catch (thrown) {
    throw wrapMigrationError(thrown, names, migration.name);
  }
  await client.query(
    `INSERT INTO ${quoteQualified(names.schema, names.migrationsTable)} (target, id, name, checksum)
     VALUES ($1, $2, $3, $4)`,
    [target, migration.id, migration.name, migration.checksum],
  );
}

/**
 * Replaces {{name}} with a quoted identifier and {{literal:name}} with a quoted string literal; an unknown
 * placeholder is a bug in the migration.
 */
export function renderSql(text: string, names: OutboxNames): string {
  const values: Record<string, string> = {
    schema: names.schema,
    table: names.table,
    dead_letters_view: names.deadLettersView,
    pending_index: names.pendingIndex,
    dead_letters_index: names.deadLettersIndex,
    waiting_index: names.waitingIndex,
    processed_events: names.processedEventsTable,
    notify_function: names.notifyFunction,
    channel: names.notifyChannel,
  };
  for (const [key, column] of Object.entries(COLUMN_PLACEHOLDERS)) values[key] = column(names.columns);
  return text.replace(/\{\{(literal:)?(\w+)\}\}/g, (_match, literal: string | undefined, key: string) => {
    const value = values[key];
    if (value === undefined) throw new MigrationError(`unknown placeholder {{${key}}} in a migration`);
    return literal === undefined ? quoteIdentifier(value) : escapeLiteral(value);
  });
}

async function ensurePublication(
  client: pg.ClientBase,
  names: OutboxNames,
  options: MigrateOptions,
): Promise<'created' | 'unchanged' | 'updated'> {
  const table = quoteQualified(names.schema, names.table);
  const publication = quoteIdentifier(options.publication);
  const existing = await readPublication(client, options.publication, names.schema, names.table);
  if (existing === undefined) {
    const { rows } = await client.query<{ partitioned: boolean }>(
      `SELECT ${renderIsPartitioned('$1')} AS partitioned`,
      [table],
    );
    // Under the partitions' names pgoutput would send rows walbox does not take for the outbox's.
    const viaRoot = rows[0]?.partitioned === true ? ', publish_via_partition_root = true' : '';
    await client.query(
      `CREATE PUBLICATION ${publication} FOR TABLE ${table} WITH (publish = 'insert'${viaRoot})`,
    );
    return 'created';
  }
  // An existing publication may be shared with other tables or tools: report instead of changing it.
  const problem = explainPublicationProblem(existing, publication, table);
  if (problem === undefined) return 'unchanged';
  const others = explainPublicationProblem({ ...existing, publishesPartitions: false }, publication, table);
  if (!existing.publishesPartitions || others !== undefined) throw new PreconditionError(problem);
  // Only the partitions' names are wrong: walbox's own publication is switched, a shared one reported.
  await publishViaPartitionRoot(client, { ...names, publication: options.publication }, problem);
  return 'updated';
}

/** Installs (idempotently) or removes poll mode's NOTIFY trigger. */
async function setNotifyTrigger(
  client: pg.ClientBase,
  names: OutboxNames,
  sqlDir: string,
  on: boolean,
): Promise<void> {
  if (on) {
    await client.query(
      renderSql(readFileSync(join(sqlDir, 'optional', 'notify_trigger.sql'), 'utf8'), names),
    );
    return;
  }
  await client.query(`DROP TRIGGER IF EXISTS walbox_notify ON ${quoteQualified(names.schema, names.table)}`);
  await client.query(`DROP FUNCTION IF EXISTS ${quoteQualified(names.schema, names.notifyFunction)}()`);
}

function wrapMigrationError(thrown: unknown, names: OutboxNames, file?: string): Error {
  if (thrown instanceof MigrationError || thrown instanceof PreconditionError) return thrown;
  const error = toError(thrown);
  const where = `${file === undefined ? 'migrating' : `applying ${file} to`} ${quoteQualified(names.schema, names.table)}`;
  if (errorCodeOf(thrown) === SQLSTATE.INSUFFICIENT_PRIVILEGE) {
    return new PreconditionError(
      `${where}: ${error.message}: run walbox migrate as the table owner or a role with CREATE on the database`,
      { cause: thrown },
    );
  }
  return new MigrationError(`${where}: ${error.message}`, { cause: thrown });
}
