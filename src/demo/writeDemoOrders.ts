import { quoteQualified } from '../db/quoteIdentifier.js';
import { enqueue } from '../outbox/enqueue.js';
import { connectDatabase } from '../db/connectDatabase.js';

export interface DemoWriterOptions {
  readonly databaseUrl: string;
  readonly schema?: string;
  /** Orders per second (one order and its event per transaction). */
  readonly ratePerSecond: number;
  readonly signal: AbortSignal;
  /** Called after each commit with the number of orders committed so far. */
  readonly onCommit?: (orders: number) => void;
}

/**
 * The demo's order service: each transaction inserts an order and its `order.created` event, as a real service
 * would with walbox (the business row and the event commit together or not at all). Runs until `signal` aborts;
 * returns how many orders it committed.
 */
export async function writeDemoOrders(options: DemoWriterOptions): Promise<number> {
  const schema = options.schema ?? 'public';
  const orders = quoteQualified(schema, 'demo_orders');
  // connectDatabase negotiates sslmode=prefer (the default) like the relay does.
  const client = await connectDatabase({
    databaseUrl: options.databaseUrl,
    startupTimeoutMs: 30_000,
    applicationName: 'walbox demo writer',
  });
  let committed = 0;
  try {
    await client.query(
      `CREATE TABLE IF NOT EXISTS ${orders} (
         id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
         customer text NOT NULL,
         total_cents int NOT NULL,
         created_at timestamptz NOT NULL DEFAULT now())`,
    );
    const started = Date.now();
    while (!options.signal.aborted) {
      const due = started + (committed * 1000) / options.ratePerSecond;
      const wait = due - Date.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      const customer = `customer-${String(1 + Math.floor(Math.random() * 50))}`;
      const totalCents = 500 + Math.floor(Math.random() * 20_000);
      await client.query('BEGIN');
      try {
        const { rows } = await client.query<{ id: string }>(
          `INSERT INTO ${orders} (customer, total_cents) VALUES ($1, $2) RETURNING id::text`,
          [customer, totalCents],
        );
        const orderId = rows[0]?.id ?? '';
        await enqueue(
          client,
          {
            aggregateType: 'order',
            aggregateId: orderId,
            eventType: 'order.created',
            payload: { orderId, customer, totalCents },
          },
          { schema },
        );
        await client.query('COMMIT');
      } catch (error) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw error;
      }
      committed++;
      options.onCommit?.(committed);
    }
    return committed;
  } finally {
    await client.end().catch(() => undefined);
  }
}
