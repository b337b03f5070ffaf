/**
 * What enqueue() needs from a database client: pg's Client and PoolClient fit, as do most wrappers. It must be
 * a client inside the caller's transaction, not a pool.
 */
export interface SqlExecutor {
  query(text: string, values?: unknown[]): Promise<{ rows: unknown[] }>;
}
