import { after } from 'node:test';

import { dropSchema } from './testDatabase.js';
import { requireDatabaseUrl, uniqueName } from './testEnv.js';

/** The schema and publication one `walbox migrate` run works on. */
export interface MigrateTarget {
  readonly schema: string;
  readonly publication: string;
}

/**
 * Hands out targets with fresh names (a schema named `schemaPrefix_…`, or the given schema, and a fresh
 * publication); after the tests of the suite (or file) that calls this, drops every one handed out.
 */
export function trackMigrateTargets(schemaPrefix: string): (schema?: string) => MigrateTarget {
  const created: MigrateTarget[] = [];
  after(async () => {
    for (const target of created) await dropSchema(target.schema, target.publication);
  });
  return (schema) => {
    const target = { schema: schema ?? uniqueName(schemaPrefix), publication: uniqueName('pub') };
    created.push(target);
    return target;
  };
}

/** `walbox migrate` against the stack's database on `target`, with any extra flags. */
export function buildMigrateArgs(target: MigrateTarget, ...extra: string[]): string[] {
  return [
    'migrate',
    '--database-url',
    requireDatabaseUrl(),
    '--schema',
    target.schema,
    '--publication',
    target.publication,
    ...extra,
  ];
}

/** `walbox migrate --print-sql` for `target` (no database), with any extra flags. */
export function buildPrintSqlArgs(target: MigrateTarget, ...extra: string[]): string[] {
  return ['migrate', '--print-sql', '--schema', target.schema, '--publication', target.publication, ...extra];
}
