import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { describeDatabase, redactDatabaseUrl } from '../../../src/db/describeDatabase.js';
import { renderSql } from '../../../src/db/migrate.js';
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
