import { toOutboxTable } from '../config/toOutboxTable.js';
import type pg from 'pg';

import { deliverBatch } from '../core/deliverBatch.js';
import { formatLsn, parseLsn, type Lsn } from '../core/lsn.js';
import type { OutboxStore } from '../core/ports.js';
import type { RetryContext } from '../core/retryUntilDone.js';
import { StreamRelay } from '../core/streamRelay.js';
import { createPool } from '../db/createPool.js';
import { describeDatabase } from '../db/describeDatabase.js';
import { readSlotStatus } from '../db/readSlotStatus.js';
import { readWalPosition } from '../db/readWalPosition.js';
import { SQLSTATE, errorCodeOf } from '../db/sqlState.js';
import { PgOutboxStore } from '../db/pgOutboxStore.js';
import { WalboxState, type SlotRecord } from '../db/walboxState.js';
import { PreconditionError, WalboxError, summarizeError } from '../errors.js';
import { drainPendingRows } from '../source/poll/drainPendingRows.js';
import {
  alterSlotFailover,
  createSlotWithSnapshot,
  dropSlot,
  readSlot,
} from '../source/wal/replicationSlot.js';
import {
  decideSlotFailover,
  describeUnguardedFailover,
  readServerVersion,
} from '../source/wal/slotFailover.js';
import { WalSource } from '../source/wal/walSource.js';
import type { RelayContext } from './relayContext.js';
import { isRetriableStreamError } from './isRetriableStreamError.js';
import { sleep } from './sleep.js';

/**
 * Buffered stream items (or payload bytes) above which the replication socket is paused (G6). A few batches ahead
 * keep the pipeline fed; more only costs memory (measured on 10k events of 8 KB: peak RSS about 20 MiB lower with
 * 4 MiB than with 16 MiB, at the same rate).
 */
const HIGH_WATER_ITEMS = 10_000;
const HIGH_WATER_BYTES = 4 * 1024 * 1024;
/** Reconnect backoff; a recovered server is used within this much time. */
const MAX_RECONNECT_DELAY_MS = 30_000;
/**
 * How often a standby relay looks at the slot (one cheap query, no replication connection): the bulk of the
 * takeover time once the active relay's walsender has gone.
 */
const STANDBY_CHECK_MS = 1_000;

/**
 * WAL mode: check the outbox, make sure the slot exists and every row it will not stream is caught up, then
 * stream until stopped. Replication failures (server restart, walsender terminated, slot still held by a dying
 * walsender) restart the stream from the slot's confirmed position with backoff; nothing is confirmed that is
 * not delivered, so a restart only repeats work.
 */
export async function runWalRelay(context: RelayContext): Promise<void> {
  const { config, logger } = context;
  // Timeouts on every relay query: a half-open connection must fail (and be replaced), not hang a batch forever.
  const pool = createPool(context.databaseUrl, {
    applicationName: config.applicationName,
    max: 3,
    logger,
    timeoutMs: config.databaseTimeoutMs,
  });
  const store = new PgOutboxStore(pool, toOutboxTable(config));
  const state = new WalboxState(pool, config);
  const retry: RetryContext = {
    policy: {
      initialDelayMs: config.retryBackoffInitialMs,
      maxDelayMs: Math.min(config.retryBackoffMaxMs, MAX_RECONNECT_DELAY_MS),
    },
    logger,
    observer: context.observer,
    sleep,
    signal: context.giveUp,
  };
  try {
    let delay = config.retryBackoffInitialMs;
    let staleWalsender: number | undefined;
    let standingBySince: number | undefined;
    while (!context.stop.aborted) {
      let source: WalSource | undefined;
      try {
        const startLsn = await prepareSlot(context, pool, store, state, retry);
        if (isStopping(context)) break;
        if (
          staleWalsender !== undefined &&
          (await endStaleWalsender(pool, config.slot, staleWalsender, logger))
        )
          staleWalsender = undefined;
        logger.debug({ slot: config.slot }, 'starting replication');
        source = await WalSource.start({
          databaseUrl: context.databaseUrl,
          slot: config.slot,
          publication: config.publication,
          applicationName: config.applicationName,
          schema: config.schema,
          table: config.table,
          columns: toOutboxTable(config).columns,
          startLsn,
          statusIntervalMs: config.statusIntervalMs,
          // Replies are asked for after a silent status interval: give them at least one more to arrive.
          receiveTimeoutMs: Math.max(config.databaseTimeoutMs, 2 * config.statusIntervalMs),
          highWaterItems: Math.max(HIGH_WATER_ITEMS, config.batchSize * 4),
          highWaterBytes: HIGH_WATER_BYTES,
          logger,
          persistPosition: (lsn) => state.recordConfirmed(lsn),
        });
        // Read once the slot is ours: rows committed later cannot have been delivered by a catch-up, an earlier
        // run or a relay that held the slot before us (StreamRelayOptions.freshAfterLsn). Unknown: check every row.
        const freshAfterLsn = await readWalPosition(pool).catch(() => undefined);
        context.observer.recovered?.({ step: 'replication' });
        if (standingBySince !== undefined) {
          logger.info(
            { slot: config.slot, standbyMs: Date.now() - standingBySince },
            'took over the replication slot',
          );
          standingBySince = undefined;
        }
        context.onRole?.('active');
        const started = source;
        const stopReceiving = (): void => void started.stopReceiving();
        // Giving up (--shutdown-timeout) must not wait for a call in flight; nothing more is confirmed after it.
        const abandon = (): void => started.abandon('gave up on shutdown: --shutdown-timeout passed');
        context.stop.addEventListener('abort', stopReceiving, { once: true });
        context.giveUp.addEventListener('abort', abandon, { once: true });
        // A signal that arrived while we connected has fired already: listeners added now would never run.
        if (isStopping(context)) stopReceiving();
        if (hasGivenUp(context)) abandon();
        logger.info({ slot: config.slot, lsn: formatLsn(startLsn) }, 'streaming from the replication slot');
        delay = config.retryBackoffInitialMs;
        const relay = new StreamRelay(
          {
            stream: source,
            sink: context.sink,
            store,
            logger,
            sleep,
            observer: context.observer,
          },
          {
            batchSize: config.batchSize,
            retry: retry.policy,
            startLsn,
            freshAfterLsn,
            lingerMs: config.lingerMs,
          },
        );
        try {
          await relay.run(context.giveUp);
        } finally {
          context.stop.removeEventListener('abort', stopReceiving);
          context.giveUp.removeEventListener('abort', abandon);
        }
        await source.close();
        await waitForSlotConfirmed(pool, config.slot, relay.confirmedLsn());
        logger.info(
          { slot: config.slot, lsn: formatLsn(relay.confirmedLsn()) },
          'stopped; everything delivered is confirmed',
        );
        return;
      } catch (error) {
        staleWalsender ??= source?.abandonedWalsender();
        await source?.close().catch(() => undefined);
        if (context.giveUp.aborted) throw context.giveUp.reason;
        if (isPoolerError(error)) {
          throw new PreconditionError(
            'the replication connection was refused as by a connection pooler (PgBouncer): replication needs a ' +
              'direct connection to PostgreSQL; point --database-url at the server itself',
            { cause: error },
          );
        }
        if (!isRetriableStreamError(error)) throw error;
        const holder =
          errorCodeOf(error) === SQLSTATE.OBJECT_IN_USE
            ? await readSlotStatus(pool, config.slot).catch(() => undefined)
            : undefined;
        // Our own connection given up as dead is ended before the next start (endStaleWalsender), not waited for.
        if (holder !== undefined && holder.activePid !== staleWalsender) {
          const heldBy = holder.activeReader;
          if (heldBy === null) {
            logger.debug({ slot: config.slot }, 'the replication slot was released meanwhile');
          } else {
            if (standingBySince === undefined) {
              standingBySince = Date.now();
              logger.info(
                { slot: config.slot, holder: heldBy },
                `another relay holds the replication slot (pid ${String(heldBy.pid)}): standing by`,
              );
            } else {
              logger.debug({ slot: config.slot, holder: heldBy }, 'the replication slot is still held');
            }
            context.observer.recovered?.({ step: 'replication' });
            context.onRole?.('standby');
          }
          await waitForSlotRelease(pool, config.slot, context.stop);
          delay = config.retryBackoffInitialMs;
          continue;
        }
        logger.warn(
          { err: summarizeError(error), slot: config.slot, retryInMs: delay },
          'replication interrupted; reconnecting',
        );
        context.observer.retrying?.({
          step: 'replication',
          attempt: 0,
          delayMs: delay,
          error: error as Error,
        });
        await sleep(delay, context.stop).catch(() => undefined);
        delay = Math.min(delay * 2, retry.policy.maxDelayMs);
      }
    }
  } finally {
    await pool.end().catch(() => undefined);
  }
}

/**
 * Makes sure the slot exists and that every row it will not stream is delivered first. A missing or invalidated
 * slot is (re)created with an exported snapshot, and the rows pending in that snapshot are delivered before
 * streaming. An existing slot is caught up from the table first when it may have skipped rows (see
 * catchUpReason): rows still pending are delivered in seq order, and their streamed copies are skipped as
 * already processed.
 */
async function prepareSlot(
  context: RelayContext,
  pool: pg.Pool,
  store: OutboxStore,
  state: WalboxState,
  retry: RetryContext,
): Promise<Lsn> {
  const { config, logger } = context;
  const drain = (snapshotName?: string): Promise<number> =>
    drainPendingRows({
      databaseUrl: context.databaseUrl,
      outbox: toOutboxTable(config),
      batchSize: config.batchSize,
      snapshotName,
      deliver: async (records) => {
        await deliverBatch(records, { sink: context.sink, store, retry });
      },
      shouldStop: () => context.stop.aborted,
    });
  const failover = decideSlotFailover(config.slotFailover, await readServerVersion(pool));
  if (failover) {
    const unguarded = await describeUnguardedFailover(pool);
    if (unguarded !== undefined) logger.warn({ slot: config.slot }, unguarded);
  }
  let slot = await readSlot(pool, config.slot);
  if (slot?.lost === true) {
    logger.error(
      { slot: config.slot, database: describeDatabase(context.databaseUrl) },
      'replication slot was invalidated (wal_status=lost, max_slot_wal_keep_size exceeded?): recreating it and catching up from the table',
    );
    await dropSlot(pool, config.slot);
    slot = undefined;
  }
  if (slot === undefined) {
    logger.warn(
      { slot: config.slot, database: describeDatabase(context.databaseUrl) },
      'replication slot missing: creating it',
    );
    let drained = 0;
    const consistentPoint = await createSlotWithSnapshot(
      context.databaseUrl,
      config.slot,
      async (snapshotName) => {
        await state.recordSlot(0n);
        drained = await drain(snapshotName);
      },
      { failover },
    );
    if (context.stop.aborted) return consistentPoint;
    await state.recordConfirmed(consistentPoint);
    await state.markCaughtUp();
    logger.info(
      { slot: config.slot, lsn: formatLsn(consistentPoint), rows: drained, failover },
      'slot created; pending rows caught up',
    );
    slot = await readSlot(pool, config.slot);
    if (slot === undefined) {
      throw new WalboxError('SLOT_UNAVAILABLE', `replication slot ${config.slot} vanished after creation`, {
        retriable: true,
      });
    }
    return slot.confirmedFlushLsn;
  }
  if (slot.failover !== null && slot.failover !== failover && !slot.active) {
    // A slot made before an upgrade to 17, or before --slot-failover changed: give it the setting asked for.
    await alterSlotFailover(context.databaseUrl, config.slot, failover);
    logger.info({ slot: config.slot, failover }, 'replication slot failover setting changed');
  }
  const recorded = await state.read();
  const reason = catchUpReason(recorded, slot.confirmedFlushLsn);
  if (reason === undefined) return slot.confirmedFlushLsn;
  logger.warn(
    { slot: config.slot, slotLsn: formatLsn(slot.confirmedFlushLsn), walboxLsn: recorded?.confirmedLsn },
    `${reason}: delivering the rows pending in the table first`,
  );
  if (recorded?.sameSystem !== true) await state.recordSlot(slot.confirmedFlushLsn);
  const drained = await drain();
  if (context.stop.aborted) return slot.confirmedFlushLsn;
  await state.markCaughtUp();
  logger.info({ slot: config.slot, rows: drained }, 'pending rows caught up from the table');
  return slot.confirmedFlushLsn;
}

/**
 * Why an existing slot may have skipped rows, or undefined when it cannot have: walbox records every position
 * before it reports it, so a slot ahead of that record was moved by someone else.
 */
function catchUpReason(recorded: SlotRecord | undefined, slotLsn: Lsn): string | undefined {
  if (recorded === undefined) return 'slot found that walbox has no record of (created by hand?)';
  if (!recorded.sameSystem) return 'slot record comes from another cluster (restored or promoted?)';
  if (!recorded.caughtUp) return 'the catch-up after the slot was created did not finish';
  if (recorded.confirmedLsn !== null && slotLsn > parseLsn(recorded.confirmedLsn)) {
    return 'slot is ahead of what walbox confirmed (advanced or recreated out of band?)';
  }
  return undefined;
}

/**
 * A connection we gave up as dead (half-open) leaves its walsender holding the slot until the server's
 * wal_sender_timeout: end it, but only while it is that very process holding our slot (never another relay's).
 */
async function endStaleWalsender(
  pool: pg.Pool,
  slot: string,
  pid: number,
  logger: RelayContext['logger'],
): Promise<boolean> {
  try {
    const { rows } = await pool.query<{ ended: boolean }>(
      'SELECT pg_terminate_backend(active_pid) AS ended FROM pg_replication_slots WHERE slot_name = $1 AND active_pid = $2',
      [slot, pid],
    );
    if (rows[0]?.ended === true)
      logger.warn({ slot, pid }, 'ended the walsender of the connection given up as dead');
    return true;
  } catch (error) {
    // Not fatal: the server's wal_sender_timeout ends it too; tried again before the next start.
    logger.debug({ err: error, slot, pid }, 'could not end the walsender of the connection given up as dead');
    return false;
  }
}

/**
 * A standby relay watches the slot instead of asking for it: a refused START_REPLICATION costs a connection and a
 * walsender each time. Returns once no one streams from it (or on stop); a failed look returns too, and the next
 * start attempt reports the failure.
 */
async function waitForSlotRelease(pool: pg.Pool, slot: string, stop: AbortSignal): Promise<void> {
  while (!stop.aborted) {
    await sleep(STANDBY_CHECK_MS, stop).catch(() => undefined);
    const status = await readSlotStatus(pool, slot).catch(() => undefined);
    if (status?.active !== true) return;
  }
}

/** After the final status update, wait (briefly) until the server shows it, so a restart replays nothing. */
async function waitForSlotConfirmed(pool: pg.Pool, slot: string, lsn: Lsn): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (Date.now() < deadline) {
    const current = await readSlot(pool, slot).catch(() => undefined);
    if (current === undefined || (current.confirmedFlushLsn >= lsn && !current.active)) return;
    await sleep(50);
  }
}

/** A function, not a property read, so that the linter does not narrow it across awaits. */
function isStopping(context: RelayContext): boolean {
  return context.stop.aborted;
}

function hasGivenUp(context: RelayContext): boolean {
  return context.giveUp.aborted;
}

function isPoolerError(error: unknown): boolean {
  return error instanceof Error && /unsupported startup parameter|pgbouncer/i.test(error.message);
}
