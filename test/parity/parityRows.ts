import { randomUUID } from 'node:crypto';

/** One row of the Debezium-shaped outbox table, as the parity test writes it into both tables. */
export interface OutboxRow {
  readonly id: string;
  readonly aggregatetype: string;
  readonly aggregateid: string;
  readonly type: string;
  /** jsonb input text (PostgreSQL normalises it), or null for SQL NULL. */
  readonly payload: string | null;
  /** The extra column sent as a header by both systems. */
  readonly tenant: string | null;
  /** `timestamp` (without time zone) input, or null: the event time of scenario "event time". */
  readonly occurredAt: string | null;
  /** What the row exercises. */
  readonly note: string;
}

/** The aggregate types, each made unique to the run (the topics are the run's own). */
export const AGGREGATE_TYPES = ['Order', 'customer', 'shipment.v2'] as const;
export type AggregateType = (typeof AGGREGATE_TYPES)[number];

/**
 * The rows, grouped by transaction: several aggregates (one with many events, ids with unicode, spaces, digits
 * only, 200 characters), three aggregate types, payloads with nesting, unicode and escapes, numbers jsonb
 * rewrites, whitespace inside strings and between tokens, scalar JSON, JSON null, SQL NULL and 64 KiB; tenants
 * with unicode, empty and NULL; event times with microseconds (truncated, never rounded, to milliseconds) and NULL.
 */
export function parityTransactions(typeName: (t: AggregateType) => string): OutboxRow[][] {
  let n = 0;
  const row = (
    type: AggregateType,
    aggregateid: string,
    payload: string | null,
    note: string,
    more: { tenant?: string | null; occurredAt?: string | null; eventType?: string } = {},
  ): OutboxRow => {
    n += 1;
    return {
      id: randomUUID(),
      aggregatetype: typeName(type),
      aggregateid,
      type: more.eventType ?? `${type}Changed`,
      payload,
      tenant: more.tenant === undefined ? (n % 2 === 0 ? 'acme' : 'globex') : more.tenant,
      occurredAt:
        more.occurredAt === undefined
          ? `2024-03-${String(1 + (n % 28)).padStart(2, '0')} 12:00:00.${String(n * 1001).padStart(6, '0')}`
          : more.occurredAt,
      note,
    };
  };
  const big = JSON.stringify({ blob: 'x'.repeat(64 * 1024), tail: 'end' });
  return [
    [
      row(
        'Order',
        'order-1',
        '{"id": 1, "lineItems": [{"id": 1, "item": "Debezium in Action", "status": "ENTERED", "quantity": 2, "totalPrice": 39.98}], "orderDate": "2019-01-31T12:13:01", "customerId": 123}',
        "nested objects (Debezium's docs example)",
        { eventType: 'OrderCreated', occurredAt: '2024-02-29 12:34:56.789999' },
      ),
      row(
        'Order',
        'order-1',
        '{"zeta": 1, "alpha": 2, "mid": 3, "a": {"c": 1, "b": 2}}',
        'key order (jsonb sorts)',
      ),
      row('Order', 'order-1', '{ "spaced" :  [ 1 ,2,   3 ] ,"x":{ } }', 'whitespace between tokens'),
      row(
        'Order',
        'order-1',
        '{"text": "  two  spaces\\tand\\ttabs\\nnew line  ", "crlf": "a\\r\\nb"}',
        'whitespace inside strings',
      ),
    ],
    [
      row(
        'customer',
        'kunde-ü-åäö',
        '{"name": "Zoë Ünal", "city": "東京", "emoji": "😀", "escaped": "\\u00e9\\ud83d\\ude00", "rtl": "שלום"}',
        'unicode key and payload, \\u escapes',
        { tenant: 'tënant-ß' },
      ),
      row(
        'customer',
        'with space 42',
        '{"int": 1, "neg": -0.0, "float": 2.50, "exp": 1e-7, "bigexp": 1E+25, "big": 12345678901234567890123, "pi": 3.141592653589793238462643383279}',
        'numbers jsonb rewrites',
        { tenant: '' },
      ),
      row(
        'customer',
        '42',
        '{"quote": "say \\"hi\\"", "backslash": "C:\\\\path", "control": "\\u0001\\u001f", "slash": "a\\/b", "html": "<&>"}',
        'escapes',
        { tenant: null },
      ),
    ],
    [row('shipment.v2', 'ship-1', '"just a JSON string"', 'scalar JSON string', { occurredAt: null })],
    [
      row('shipment.v2', 'ship-1', '42', 'scalar JSON number'),
      row('shipment.v2', 'ship-2', 'true', 'scalar JSON boolean'),
      row('shipment.v2', 'ship-2', '[]', 'empty array'),
      row('shipment.v2', 'ship-2', '{}', 'empty object'),
      row('shipment.v2', 'ship-3', 'null', 'JSON null'),
      row('shipment.v2', 'ship-3', null, 'SQL NULL payload'),
      row('shipment.v2', 'ship-3', '{"a": 1, "a": 2}', 'duplicate keys (jsonb keeps the last)'),
    ],
    [
      row('Order', 'o'.repeat(200), big, '64 KiB payload, 200-character key', {
        occurredAt: '1999-12-31 23:59:59.9995',
      }),
      row('Order', 'order-2', '{"v": 1}', 'second aggregate, same type', {
        occurredAt: '2021-07-04 03:14:08.000001',
      }),
    ],
    Array.from({ length: 12 }, (_, i) =>
      row(
        (['Order', 'customer', 'shipment.v2'] as const)[i % 3] ?? 'Order',
        `agg-${i % 5}`,
        JSON.stringify({ seq: i, list: [i, i * 1.5, `s${i}`] }),
        'one transaction, several aggregates and types',
      ),
    ),
  ];
}
