import type { OutboxRecord } from '../../core/outboxRecord.js';
import { toIsoTimestamp } from '../../core/formatPgTimestamp.js';
import { parseEventTime, parseUtcEventTime } from '../../core/parseEventTime.js';
import { listEventColumns, type OutboxColumns } from '../../outbox/outboxColumns.js';
import { DecodeError } from './pgoutput/decodeError.js';
import type { PgoutputMessage, TupleValue } from './pgoutput/pgoutputMessage.js';

type Relation = Extract<PgoutputMessage, { tag: 'relation' }>;

/** Column positions of one Relation message, checked once per Relation (columns can change while streaming). */
export class OutboxRelation {
  private readonly positions: ReadonlyMap<string, number>;

  constructor(
    readonly relation: Relation,
    private readonly columns: OutboxColumns,
  ) {
    this.positions = new Map(relation.columns.map((c, i) => [c.name, i]));
    const delivered = [...listEventColumns(columns), 'created_at', 'seq'];
    const missing = [...new Set(delivered)].filter((c) => !this.positions.has(c));
    if (missing.length > 0) {
      throw new DecodeError(
        `outbox table ${relation.schema}.${relation.name} has no column ${missing.join(', ')}: run walbox migrate`,
      );
    }
  }

  /**
   * The record of one INSERT; every value stays the text PostgreSQL sent (the payload as its UTF-8 bytes). A
   * NULL where a value is needed (a column made nullable by hand) makes a record with a `problem`: it is
   * dead-lettered, not a reason to stop.
   */
  toRecord(tuple: readonly TupleValue[], xid: number, committedAtMs?: number): OutboxRecord {
    const nulls: string[] = [];
    const required = (column: string, value: string | undefined): string => {
      if (value === undefined) nulls.push(column);
      return value ?? '';
    };
    const valueOf = (column: string): string => required(column, this.optionalText(tuple, column));
    const columns = this.columns;
    const createdAt = this.optionalText(tuple, 'created_at');
    const createdAtUtc = createdAt === undefined ? undefined : toIsoTimestamp(createdAt);
    // The event time is created_at unless configured otherwise: then one conversion to UTC serves both.
    const eventTimeMs =
      columns.timestamp === 'created_at' && createdAtUtc?.endsWith('Z') === true
        ? parseUtcEventTime(createdAtUtc)
        : this.readEventTime(tuple, columns.timestamp);
    const record = {
      id: this.text(tuple, columns.id),
      aggregateType: valueOf(columns.aggregateType),
      aggregateId: valueOf(columns.aggregateId),
      eventType: valueOf(columns.eventType),
      payload: this.optionalBytes(tuple, columns.payload) ?? null,
      headers: this.optionalText(tuple, 'headers') ?? null,
      createdAt: required('created_at', createdAtUtc),
      eventTimeMs,
      headerValues: columns.headerColumns.map((h) => this.optionalText(tuple, h.column) ?? null),
      seq: this.text(tuple, 'seq'),
      xid,
      committedAtMs,
    };
    if (nulls.length > 0)
      return { ...record, createdAt: createdAt ?? '', problem: `column ${nulls.join(', ')} is NULL` };
    return record;
  }

  private readEventTime(tuple: readonly TupleValue[], column: string): number | undefined {
    const text = this.optionalText(tuple, column);
    return text === undefined ? undefined : parseEventTime(text);
  }

  private optionalText(tuple: readonly TupleValue[], column: string): string | undefined {
    return this.optionalBytes(tuple, column)?.toString('utf8');
  }

  private optionalBytes(tuple: readonly TupleValue[], column: string): Buffer | undefined {
    const position = this.positions.get(column);
    const value = position === undefined ? undefined : tuple[position];
    if (value === undefined || value.kind === 'null') return undefined;
    if (value.kind !== 'text') {
      throw new DecodeError(
        `column ${column} of ${this.relation.name} arrived as ${value.kind}, expected text`,
      );
    }
    return value.bytes;
  }

  /** id and seq: the primary key and an identity column, never NULL in an outbox table. */
  private text(tuple: readonly TupleValue[], column: string): string {
    const value = this.optionalText(tuple, column);
    if (value === undefined)
      throw new DecodeError(`column ${column} of ${this.relation.name} is NULL in an INSERT`);
    return value;
  }
}
