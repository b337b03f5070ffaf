import { quoteQualified } from '../db/quoteIdentifier.js';
import { ConfigError } from '../errors.js';
import { explainBadIdentifier } from '../config/validateIdentifier.js';
import type { EnqueuedEvent, OutboxEvent } from './outboxEvent.js';
import type { SqlExecutor } from './sqlExecutor.js';

export interface EnqueueOptions {
  readonly schema?: string;
  readonly table?: string;
  /**
   * Take a transaction-scoped advisory lock on the aggregate first, for writers that do not already lock the
   * aggregate's row: then insert order (seq) equals commit order per aggregate.
   */
  readonly lockAggregate?: boolean;
}

/**
 * Inserts one event into the outbox in the caller's transaction: it is published if and only if that
 * transaction commits. Values always travel as bound parameters.
 */
export async function enqueue(
  client: SqlExecutor,
  event: OutboxEvent,
  options: EnqueueOptions = {},
): Promise<EnqueuedEvent> {
  assertNotPool(client);
  const table = quoteQualified(
    checkName(options.schema ?? 'public', 'schema'),
    checkName(options.table ?? 'outbox_events', 'table'),
  );
  const payloadJson = toPayloadJson(event);
  const headersJson = event.headers === undefined ? null : JSON.stringify(event.headers);
  if (options.lockAggregate === true) {
    await client.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [
      `walbox:${event.aggregateType}:${event.aggregateId}`,
    ]);
  }
  const { rows } = await client.query(
    `INSERT INTO ${table} (id, aggregate_type, aggregate_id, event_type, payload, headers)
     VALUES (COALESCE($1::uuid, gen_random_uuid()), $2, $3, $4, $5::jsonb, $6::jsonb)
     RETURNING id::text, seq::text`,
    [event.id ?? null, event.aggregateType, event.aggregateId, event.eventType, payloadJson, headersJson],
  );
  const row = rows[0] as EnqueuedEvent | undefined;
  if (row === undefined) throw new Error('enqueue: INSERT … RETURNING returned no row');
  return row;
}

function toPayloadJson(event: OutboxEvent): string {
  if (event.payloadJson !== undefined) {
    if (event.payload !== undefined) throw new ConfigError('enqueue: give payload or payloadJson, not both');
    return event.payloadJson;
  }
  const json = JSON.stringify(event.payload);
  // JSON.stringify(undefined) is undefined: an event needs a payload, even if it is null.
  if (typeof json !== 'string') throw new ConfigError('enqueue: the event has no JSON-serialisable payload');
  return json;
}

function checkName(name: string, what: string): string {
  const problem = explainBadIdentifier(name);
  if (problem !== undefined)
    throw new ConfigError(`enqueue: invalid ${what} ${JSON.stringify(name)}: ${problem}`);
  return name;
}

/** A pg.Pool runs each query on whichever connection is free: the insert would escape the caller's transaction. */
function assertNotPool(client: SqlExecutor): void {
  const candidate = client as Partial<Record<'totalCount' | 'idleCount' | 'waitingCount', unknown>>;
  if (typeof candidate.totalCount === 'number' && typeof candidate.idleCount === 'number') {
    throw new ConfigError(
      'enqueue: got a pool; pass the client of your transaction (const c = await pool.connect(); BEGIN; …)',
    );
  }
}
