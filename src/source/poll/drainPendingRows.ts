import type { OutboxTable } from '../../outbox/outboxColumns.js';
import pg from 'pg';

import type { OutboxRecord } from '../../core/outboxRecord.js';
import {
  MAX_BATCH_BYTES,
  selectOutboxRowsWithinBytes,
  toRecord,
  type OutboxRow,
} from '../../db/outboxRowQuery.js';
import { toPgClientConfig } from '../../db/pgClientConfig.js';

export interface DrainPendingRowsOptions {
  readonly databaseUrl: string;
  readonly outbox: OutboxTable;
  readonly batchSize: number;
  /** Read in this exported snapshot (slot creation): exactly the rows the slot will not stream. */
  readonly snapshotName?: string;
  /** Delivers one batch (publish, mark); resolves when it is done. */
  readonly deliver: (records: readonly OutboxRecord[]) => Promise<void>;
  readonly shouldStop: () => boolean;
}

/**
 * The poll path's catch-up: every row still pending, in seq order (insert order, which is commit order per
 * aggregate for writers that serialise per aggregate), in batches. Returns how many rows it handed over.
 */
export async function drainPendingRows(options: DrainPendingRowsOptions): Promise<number> {
  const client = new pg.Client({
    ...toPgClientConfig(options.databaseUrl),
    application_name: 'walbox catch-up',
  });
  client.on('error', () => undefined);
  await client.connect();
  let total = 0;
  try {
    await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
    if (options.snapshotName !== undefined) {
      // SET TRANSACTION SNAPSHOT takes no bind parameters; the name comes from the server and is quoted anyway.
      await client.query(`SET TRANSACTION SNAPSHOT ${pg.escapeLiteral(options.snapshotName)}`);
    }
    const query = selectOutboxRowsWithinBytes(options.outbox, {
      where: 'o.processed_at IS NULL AND o.dead_lettered_at IS NULL AND o.seq > $1',
      limit: '$2',
      maxBytes: '$3',
    });
    let after = '0';
    while (!options.shouldStop()) {
      const { rows } = await client.query<OutboxRow>(query, [after, options.batchSize, MAX_BATCH_BYTES]);
      if (rows.length === 0) break;
      await options.deliver(rows.map(toRecord));
      total += rows.length;
      after = rows.at(-1)?.seq ?? after;
    }
    await client.query('COMMIT');
    return total;
  } finally {
    await client.end().catch(() => undefined);
  }
}
