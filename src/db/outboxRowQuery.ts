import { quoteQualified } from './quoteIdentifier.js';

/** An outbox row with every value as text, the shape both modes turn into an OutboxRecord. */
export interface OutboxRow {
  readonly id: string;
  readonly aggregate_type: string;
  readonly aggregate_id: string;
  readonly event_type: string;
  readonly payload: string;
  readonly headers: string | null;
  readonly created_at: string;
  readonly seq: string;
}

/**
 * The select list that returns an OutboxRow: jsonb as its text (never parsed, SPEC §Kafka message) and
 * created_at as text, converted to ISO 8601 with microseconds by toIsoTimestamp (the same path as WAL mode).
 */
export function selectOutboxRow(schema: string, table: string): string {
  return `SELECT id::text AS id, aggregate_type, aggregate_id, event_type, payload::text AS payload,
                 headers::text AS headers, created_at::text AS created_at, seq::text AS seq
            FROM ${quoteQualified(schema, table)}`;
}
