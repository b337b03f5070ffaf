/** Columns walbox reads from every outbox row (headers is optional in WAL decoding: it may be NULL). */
export const DELIVERED_COLUMNS = [
  'id',
  'aggregate_type',
  'aggregate_id',
  'event_type',
  'payload',
  'created_at',
  'seq',
] as const;

/** Every column the relay needs in the table, delivery and bookkeeping alike. */
export const REQUIRED_COLUMNS = [
  ...DELIVERED_COLUMNS,
  'headers',
  'processed_at',
  'dead_lettered_at',
  'last_error',
  'attempts',
] as const;
