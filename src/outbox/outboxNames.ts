/** Names derived from the configured schema and table, so several outboxes can share one schema. */
export interface OutboxNames {
  readonly schema: string;
  readonly table: string;
  /** outbox_events → outbox_dead_letters; other tables get <table>_dead_letters. */
  readonly deadLettersView: string;
  readonly pendingIndex: string;
  readonly migrationsTable: string;
  readonly processedEventsTable: string;
}

export function deriveOutboxNames(schema: string, table: string): OutboxNames {
  const stem = table.endsWith('_events') ? table.slice(0, -'_events'.length) : table;
  return {
    schema,
    table,
    deadLettersView: `${stem}_dead_letters`,
    pendingIndex: `${table}_pending_idx`,
    migrationsTable: 'walbox_migrations',
    processedEventsTable: 'processed_events',
  };
}
