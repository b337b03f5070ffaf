import { escapeIdentifier } from 'pg';

/** Quotes an identifier for SQL text; config identifiers are validated first and quoted always. */
export function quoteIdentifier(name: string): string {
  return escapeIdentifier(name);
}

/** "schema"."name" */
export function quoteQualified(schema: string, name: string): string {
  return `${quoteIdentifier(schema)}.${quoteIdentifier(name)}`;
}
