import type { EachMessageHandler, EachMessagePayload } from 'kafkajs';
import type pg from 'pg';

import { explainBadIdentifier } from '../config/validateIdentifier.js';
import { quoteQualified } from '../db/quoteIdentifier.js';
import { SQLSTATE, errorCodeOf } from '../db/sqlState.js';
import { ConfigError, DatabaseError, PreconditionError, toError } from '../errors.js';
import type { ConsumedEvent } from './consumedEvent.js';
import { toConsumedEvent } from './toConsumedEvent.js';

/** 3F000: the schema does not exist. */
const INVALID_SCHEMA_NAME = '3F000';

export interface IdempotentHandlerOptions {
  /** The consumer's database: processed_events and the handler's own tables live there. */
  readonly pool: pg.Pool;
  /**
   * Names this consumer in processed_events: deduplication is per (consumerName, event id). Keep it stable;
   * a new name processes every event again. Independent of the Kafka group id, on purpose: a new group (or a
   * reset offset) redelivers, and the name is what recognises the redelivery.
   */
  readonly consumerName: string;
  /** Where processed_events is (`walbox migrate --consumer --schema …`); default public. */
  readonly schema?: string;
  /**
   * Applies one event. Write the effects through `client`: they commit in the same transaction as the
   * processed_events row. Do not COMMIT, ROLLBACK or release the client; throw to roll everything back.
   */
  readonly handle: (
    event: ConsumedEvent,
    client: pg.PoolClient,
    message: EachMessagePayload,
  ) => Promise<void>;
}

/**
 * Builds a kafkajs `eachMessage` handler that applies each walbox event once per consumer name.
 *
 * Delivery is at least once: the relay may publish an event twice after a crash (guarantee G4), and Kafka redelivers
 * after a consumer crash before its offset commit, a rebalance, a reset offset or to a new group. Exactly-once
 * *effects* come from pairing that with idempotent processing: the event id is recorded in processed_events in
 * the same transaction as the handler's writes, so either both commit or neither does. A redelivered event finds
 * its row and is skipped; an event whose transaction failed left no row and is applied on the retry. Kafka
 * offsets are committed by kafkajs afterwards and need not be atomic with anything: a crash in between only
 * causes a redelivery, which is skipped.
 */
export function idempotentHandler(options: IdempotentHandlerOptions): EachMessageHandler {
  const { pool, consumerName, handle } = options;
  const schema = options.schema ?? 'public';
  const problem = explainBadIdentifier(schema);
  if (problem !== undefined) {
    throw new ConfigError(`idempotentHandler: invalid schema ${JSON.stringify(schema)}: ${problem}`);
  }
  if (consumerName.trim() === '') {
    throw new ConfigError('idempotentHandler: consumerName must be a non-empty string');
  }
  const table = quoteQualified(schema, 'processed_events');
  // Under READ COMMITTED, a concurrent transaction that inserted the same (consumer, event_id) but has not
  // committed yet (the previous owner of a partition still working after a rebalance) makes this INSERT wait:
  // it then inserts nothing if that one committed, or proceeds if it rolled back. Never both.
  const recordEvent = `INSERT INTO ${table} (consumer, event_id) VALUES ($1, $2::uuid)
                       ON CONFLICT (consumer, event_id) DO NOTHING`;

  return async (payload) => {
    // Decoded before taking a connection: a message that is not a walbox event needs no transaction.
    const event = toConsumedEvent(payload);
    const context = `consumer ${JSON.stringify(consumerName)}, event ${event.id}`;
    const client = await pool.connect().catch((thrown: unknown) => {
      throw databaseError(`${context}: cannot get a connection`, thrown);
    });
    let broken: Error | undefined;
    try {
      await runStep(context, 'BEGIN', () => client.query('BEGIN'));
      const { rowCount } = await runStep(context, `recording the event in ${table}`, () =>
        client.query(recordEvent, [consumerName, event.id]),
      );
      if (rowCount === 0) {
        // Already processed (and committed) under this name: a redelivery. Nothing was written.
        await runStep(context, 'ROLLBACK', () => client.query('ROLLBACK'));
        return;
      }
      await handle(event, client, payload);
      await runStep(context, 'COMMIT', () => client.query('COMMIT'));
    } catch (thrown) {
      // Neither the processed_events row nor the handler's writes survive, so the retry starts clean. (After a
      // failed COMMIT there is nothing left to roll back; the extra ROLLBACK only draws a warning.)
      broken = await rollback(client);
      // The handler's own errors go out unchanged: kafkajs decides from them (and `retriable`) how to retry.
      throw thrown;
    } finally {
      // A connection whose ROLLBACK failed is in an unknown state: destroy it instead of pooling it.
      client.release(broken);
    }
  };
}

async function runStep<T>(context: string, step: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (thrown) {
    const code = errorCodeOf(thrown);
    if (code === SQLSTATE.UNDEFINED_TABLE || code === INVALID_SCHEMA_NAME) {
      throw new PreconditionError(
        `${context}: ${toError(thrown).message}: create processed_events with walbox migrate --consumer ` +
          '(and --schema when it is not public)',
        { cause: thrown },
      );
    }
    throw databaseError(`${context}: ${step} failed`, thrown);
  }
}

/** Database failures (connection lost, serialization failure, deadlock) can succeed on kafkajs's retry. */
function databaseError(message: string, thrown: unknown): DatabaseError {
  return new DatabaseError('DATABASE_FAILED', `${message}: ${toError(thrown).message}`, {
    cause: thrown,
    retriable: true,
  });
}

/** Rolls back; returns the error when that failed (the connection is then unusable), else undefined. */
async function rollback(client: pg.PoolClient): Promise<Error | undefined> {
  try {
    await client.query('ROLLBACK');
    return undefined;
  } catch (thrown) {
    return toError(thrown);
  }
}
