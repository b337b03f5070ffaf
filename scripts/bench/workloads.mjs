// What the benchmark writes: backlogs (written while every system is stopped, after their slots exist) and
// steady insert rates (written while one system runs). Rows spread over 1000 aggregates, like services do.
import pg from 'pg';

/**
 * Writes `events` rows, `perTxn` per transaction, each with a payload of about `payloadBytes` bytes, with a
 * server-side loop (the client would be the bottleneck otherwise). Random hex keeps large payloads from
 * compressing to nothing in TOAST, which would flatter every system.
 */
export async function writeBacklog(db, { schema, events, perTxn, payloadBytes }) {
  const s = pg.escapeIdentifier(schema);
  await db.query(`CREATE OR REPLACE PROCEDURE ${s}.bench_backlog(n int, per_txn int, pad_chunks int)
    LANGUAGE plpgsql AS $$
    DECLARE pad text;
    BEGIN
      FOR i IN 1..n LOOP
        pad := CASE WHEN pad_chunks = 0 THEN 'a small event'
                    ELSE (SELECT string_agg(md5(random()::text), '') FROM generate_series(1, pad_chunks)) END;
        INSERT INTO ${s}.outbox_events (aggregate_type, aggregate_id, event_type, payload)
        VALUES ('order', 'agg-' || (i % 1000), 'bench', jsonb_build_object('i', i, 'pad', pad));
        IF i % per_txn = 0 THEN COMMIT; END IF;
      END LOOP;
      COMMIT;
    END $$`);
  const padChunks = payloadBytes > 100 ? Math.round(payloadBytes / 32) : 0;
  const started = Date.now();
  await db.query(`CALL ${s}.bench_backlog($1, $2, $3)`, [events, perTxn, padChunks]);
  return (Date.now() - started) / 1000;
}

/**
 * Inserts one event per transaction at `rate` events/s for `seconds`, spread over several connections so the
 * writer keeps the rate on a busy machine, and returns each event's id with its inserting transaction id (the
 * row's xmin changes when walbox marks it processed).
 */
export async function writeAtRate(clients, { schema, rate, seconds }) {
  const table = `${pg.escapeIdentifier(schema)}.outbox_events`;
  const total = Math.round(rate * seconds);
  const writes = [];
  const started = Date.now();
  await Promise.all(
    clients.map(async (client, c) => {
      for (let i = c; i < total; i += clients.length) {
        const wait = started + (i * 1000) / rate - Date.now();
        if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
        const { rows } = await client.query(
          `INSERT INTO ${table} (aggregate_type, aggregate_id, event_type, payload)
           VALUES ('order', $1, 'bench', $2) RETURNING id::text AS id, xmin::text AS xid`,
          [`agg-${i % 1000}`, JSON.stringify({ i, note: 'a small event' })],
        );
        writes.push(rows[0]);
      }
    }),
  );
  return { writes, achievedRate: total / ((Date.now() - started) / 1000) };
}

/** Commit time (ms since the epoch) per event id, from track_commit_timestamp. */
export async function readCommitTimes(db, writes) {
  const { rows } = await db.query(
    `SELECT w.id, (extract(epoch FROM pg_xact_commit_timestamp(w.xid::xid)) * 1000)::float8 AS ms
       FROM unnest($1::text[], $2::text[]) AS w(id, xid)`,
    [writes.map((w) => w.id), writes.map((w) => w.xid)],
  );
  return new Map(rows.map((r) => [r.id, r.ms]));
}
