/** The two table layouts walbox knows by name: its own, and the one Debezium's Outbox Event Router documents. */
export type OutboxShape = 'walbox' | 'debezium';

/** An extra column sent as a Kafka header (Debezium: table.fields.additional.placement=column:header:name). */
export interface HeaderColumn {
  readonly column: string;
  readonly header: string;
}

/**
 * Which of the table's columns hold each part of an event. The field names are walbox's roles: the aggregate
 * (type + id) orders events and its id is the Kafka key; the aggregate type is the routing value of topic
 * templates. The bookkeeping columns (BOOKKEEPING_COLUMNS) always have walbox's names.
 */
export interface OutboxColumns {
  readonly id: string;
  /** The routing value ({aggregate_type}, ${routedByValue} in topic templates). */
  readonly aggregateType: string;
  /** The Kafka key. */
  readonly aggregateId: string;
  readonly eventType: string;
  readonly payload: string;
  /** The event time: the Kafka record timestamp with --kafka-timestamp event. */
  readonly timestamp: string;
  readonly headerColumns: readonly HeaderColumn[];
}

export const SHAPE_COLUMNS: Readonly<Record<OutboxShape, OutboxColumns>> = {
  walbox: {
    id: 'id',
    aggregateType: 'aggregate_type',
    aggregateId: 'aggregate_id',
    eventType: 'event_type',
    payload: 'payload',
    timestamp: 'created_at',
    headerColumns: [],
  },
  // Debezium's documented outbox table: id, aggregatetype, aggregateid, type, payload.
  debezium: {
    id: 'id',
    aggregateType: 'aggregatetype',
    aggregateId: 'aggregateid',
    eventType: 'type',
    payload: 'payload',
    timestamp: 'created_at',
    headerColumns: [],
  },
};

export const DEFAULT_COLUMNS = SHAPE_COLUMNS.walbox;

/** Columns walbox adds and maintains itself, under these names whatever the shape. */
export const BOOKKEEPING_COLUMNS = [
  'headers',
  'created_at',
  'seq',
  'processed_at',
  'dead_lettered_at',
  'last_error',
  'attempts',
  'retry_after',
] as const;

/** Every column the relay needs in the table: the event's (as configured) and the bookkeeping ones. */
export function listRequiredColumns(columns: OutboxColumns): string[] {
  return [...new Set([...listEventColumns(columns), ...BOOKKEEPING_COLUMNS])];
}

/** The configured columns an event is made of. */
export function listEventColumns(columns: OutboxColumns): string[] {
  return [
    columns.id,
    columns.aggregateType,
    columns.aggregateId,
    columns.eventType,
    columns.payload,
    columns.timestamp,
    ...columns.headerColumns.map((h) => h.column),
  ];
}

/** One outbox table and how to read it. */
export interface OutboxTable {
  readonly schema: string;
  readonly table: string;
  readonly columns: OutboxColumns;
}
