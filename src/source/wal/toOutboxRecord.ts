import type { OutboxRecord } from '../../core/outboxRecord.js';
import { toIsoTimestamp } from '../../core/formatPgTimestamp.js';
import { DELIVERED_COLUMNS } from '../../outbox/outboxColumns.js';
import { DecodeError } from './pgoutput/decodeError.js';
import type { PgoutputMessage, TupleValue } from './pgoutput/pgoutputMessage.js';

type Relation = Extract<PgoutputMessage, { tag: 'relation' }>;

/** Column positions of one Relation message, checked once per Relation (columns can change while streaming). */
export class OutboxRelation {
  private readonly positions: ReadonlyMap<string, number>;

  constructor(readonly relation: Relation) {
    this.positions = new Map(relation.columns.map((c, i) => [c.name, i]));
    const missing = DELIVERED_COLUMNS.filter((c) => !this.positions.has(c));
    if (missing.length > 0) {
      throw new DecodeError(
        `outbox table ${relation.schema}.${relation.name} has no column ${missing.join(', ')}: run walbox migrate`,
      );
    }
  }

  /** The record of one INSERT; every value stays the text PostgreSQL sent. */
  toRecord(tuple: readonly TupleValue[], xid: number, committedAtMs?: number): OutboxRecord {
    const headers = this.optionalText(tuple, 'headers');
    return {
      id: this.text(tuple, 'id'),
      aggregateType: this.text(tuple, 'aggregate_type'),
      aggregateId: this.text(tuple, 'aggregate_id'),
      eventType: this.text(tuple, 'event_type'),
      payload: this.text(tuple, 'payload'),
      headers: headers ?? null,
      createdAt: toIsoTimestamp(this.text(tuple, 'created_at')),
      seq: this.text(tuple, 'seq'),
      xid,
      committedAtMs,
    };
  }

  private optionalText(tuple: readonly TupleValue[], column: string): string | undefined {
    const position = this.positions.get(column);
    const value = position === undefined ? undefined : tuple[position];
    if (value === undefined || value.kind === 'null') return undefined;
    if (value.kind !== 'text') {
      throw new DecodeError(
        `column ${column} of ${this.relation.name} arrived as ${value.kind}, expected text`,
      );
    }
    return value.text;
  }

  private text(tuple: readonly TupleValue[], column: string): string {
    const value = this.optionalText(tuple, column);
    if (value === undefined)
      throw new DecodeError(`column ${column} of ${this.relation.name} is NULL in an INSERT`);
    return value;
  }
}
