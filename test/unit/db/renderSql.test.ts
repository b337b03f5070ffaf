import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { describeDatabase, redactDatabaseUrl } from '../../../src/db/describeDatabase.js';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { findSqlDir } from '../../../src/db/findSqlDir.js';
import { checksumMigration, renderSql } from '../../../src/db/migrate.js';
import { SHAPE_COLUMNS } from '../../../src/outbox/outboxColumns.js';
import { deriveOutboxNames } from '../../../src/outbox/outboxNames.js';

describe('renderSql', () => {
  it('substitutes quoted identifiers', () => {
    const sql = renderSql(
      'SELECT * FROM {{schema}}.{{table}} -- {{dead_letters_view}}',
      deriveOutboxNames('app', 'outbox_events'),
    );
    assert.equal(sql, 'SELECT * FROM "app"."outbox_events" -- "outbox_dead_letters"');
  });

  it('refuses unknown placeholders', () => {
    assert.throws(
      () => renderSql('{{nope}}', deriveOutboxNames('a', 'b')),
      /unknown placeholder \{\{nope\}\}/,
    );
  });

  it("names the configured columns: Debezium's table gets its own names, quoted", () => {
    const sql = renderSql(
      '({{id}}, {{aggregate_type}}, {{aggregate_id}}, {{event_type}}, {{payload}})',
      deriveOutboxNames('app', 'outbox', SHAPE_COLUMNS.debezium),
    );
    assert.equal(sql, '("id", "aggregatetype", "aggregateid", "type", "payload")');
  });

  it('keeps the checksums migrations were released with, before they had column placeholders', () => {
    // sha256 of 000001 and 000005 as released (git show <release>:sql/00000N_*.sql | sha256sum)
    const released: Record<string, string> = {
      '000001_create_outbox.sql': 'd85e6afc316e642fa6e5b5787f299d2274f19c6a2479db5cfcabd771848bcaf4',
      '000005_create_waiting_index.sql': '221074cb247c97cac6e8964d4bbe3fa35bbdad8a5b9c417507e5775042a065b7',
    };
    for (const [file, checksum] of Object.entries(released)) {
      const text = readFileSync(join(findSqlDir(), file), 'utf8');
      assert.match(text, /\{\{aggregate_type\}\}/, `${file} has column placeholders`);
      assert.equal(checksumMigration(text), checksum, file);
    }
  });

  it('derives the dead-letter view name from the table name', () => {
    assert.equal(deriveOutboxNames('s', 'outbox_events').deadLettersView, 'outbox_dead_letters');
    assert.equal(deriveOutboxNames('s', 'orders_outbox').deadLettersView, 'orders_outbox_dead_letters');
  });
});

describe('describeDatabase', () => {
  it('shows host, port and database but never credentials', () => {
    assert.equal(describeDatabase('postgres://relay:hunter2@db.internal:6543/app'), 'db.internal:6543/app');
    assert.equal(describeDatabase('postgresql://relay@db/app'), 'db:5432/app');
    const redacted = redactDatabaseUrl('postgres://relay:hunter2@db/app?sslmode=verify-full');
    assert.doesNotMatch(redacted, /hunter2/);
    assert.match(redacted, /relay:\*\*\*@db/);
  });
});
