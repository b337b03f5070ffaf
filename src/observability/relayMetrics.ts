import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

import type { RelayMode } from '../config/relayConfig.js';
import type { RelayObserver } from '../core/ports.js';
import type { RelayRole } from '../core/relayRole.js';
import type { OutboxRecord } from '../core/outboxRecord.js';
import type { OutboxStatus } from '../db/readOutboxStatus.js';
import type { SlotStatus } from '../db/readSlotStatus.js';
import { readPackageVersion } from './readPackageVersion.js';

/** The values `outbox_replication_slot_wal_status{status}` takes (pg_replication_slots.wal_status). */
const WAL_STATUSES = ['reserved', 'extended', 'unreserved', 'lost'] as const;

/** Distinct event_type label values kept; the rest count as "other", so a bad producer cannot explode series. */
const MAX_EVENT_TYPE_LABELS = 100;

const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300];
const BATCH_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/**
 * The relay's Prometheus metrics, in an own registry: the classic outbox relay's four under their
 * names, the operators' gauges, and the process metrics of prom-client. Slot metrics exist in WAL mode only.
 */
export class RelayMetrics {
  readonly registry = new Registry();
  private readonly eventTypes = new Set<string>();
  private readonly published: Counter;
  private readonly failed: Counter<'event_type'>;
  private readonly pending: Gauge;
  private readonly batchDuration: Histogram;
  private readonly deadLetters: Gauge;
  private readonly oldestPendingAge: Gauge;
  private readonly deliveryLatency: Histogram;
  private readonly inFlight: Gauge;
  private readonly active: Gauge;
  private readonly ready: Gauge;
  private isReady: () => boolean = () => false;
  private readonly slot:
    | {
        readonly lag: Gauge;
        readonly retained: Gauge;
        readonly active: Gauge;
        readonly safeWalSize: Gauge;
        readonly walStatus: Gauge<'status'>;
      }
    | undefined;

  constructor(mode: RelayMode) {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry });
    this.published = new Counter({
      name: 'outbox_events_published_total',
      help: 'Events published to Kafka and acked by the broker',
      registers,
    });
    this.failed = new Counter({
      name: 'outbox_events_failed_total',
      help: 'Events that failed a publish attempt or were dead-lettered, by event type',
      labelNames: ['event_type'],
      registers,
    });
    this.pending = new Gauge({
      name: 'outbox_events_pending',
      help: 'Outbox rows neither processed nor dead-lettered',
      registers,
    });
    this.batchDuration = new Histogram({
      name: 'outbox_batch_duration_seconds',
      help: 'Time to deliver one batch: check, publish with acks=all, mark',
      buckets: BATCH_BUCKETS,
      registers,
    });
    this.deadLetters = new Gauge({
      name: 'outbox_events_dead_letters',
      help: 'Dead-lettered outbox rows',
      registers,
    });
    this.oldestPendingAge = new Gauge({
      name: 'outbox_oldest_pending_age_seconds',
      help: 'Age of the oldest pending outbox row (0 when none)',
      registers,
    });
    this.deliveryLatency = new Histogram({
      name: 'outbox_delivery_latency_seconds',
      help: 'From the commit (WAL mode; created_at in poll mode) to the broker ack',
      buckets: LATENCY_BUCKETS,
      registers,
    });
    this.inFlight = new Gauge({
      name: 'outbox_relay_in_flight_events',
      help: 'Events received or claimed and not yet delivered and marked',
      registers,
    });
    this.active = new Gauge({
      name: 'outbox_relay_active',
      help: '1 while this relay delivers; 0 while it starts or stands by (another relay holds the replication slot)',
      registers,
    });
    const read = (): boolean => this.isReady();
    this.ready = new Gauge({
      name: 'outbox_relay_ready',
      help: '1 while /readyz answers 200 (delivering, or standing by for the slot); 0 while not ready',
      registers,
      collect() {
        this.set(read() ? 1 : 0);
      },
    });
    new Gauge({
      name: 'outbox_relay_build_info',
      help: "walbox's version and the Node.js running it; always 1",
      labelNames: ['version', 'node_version'],
      registers,
    }).set({ version: readPackageVersion(), node_version: process.versions.node }, 1);
    this.slot =
      mode === 'wal'
        ? {
            lag: new Gauge({
              name: 'outbox_replication_slot_lag_bytes',
              help: "WAL written since the slot's confirmed position",
              registers,
            }),
            retained: new Gauge({
              name: 'outbox_replication_slot_retained_wal_bytes',
              help: 'WAL the server keeps for the slot (from restart_lsn)',
              registers,
            }),
            active: new Gauge({
              name: 'outbox_replication_slot_active',
              help: '1 when a walsender streams from the slot',
              registers,
            }),
            safeWalSize: new Gauge({
              name: 'outbox_replication_slot_safe_wal_size_bytes',
              help: 'WAL that may still be written before the slot is invalidated (max_slot_wal_keep_size)',
              registers,
            }),
            walStatus: new Gauge({
              name: 'outbox_replication_slot_wal_status',
              help: 'The slot wal_status: 1 for the current one',
              labelNames: ['status'],
              registers,
            }),
          }
        : undefined;
    // Absent until the first sample: a 0 would claim a slot with no lag before anything was read.
    this.clearSlotGauges();
  }

  /** Feeds the counters and histograms from the relay. */
  observer(): RelayObserver {
    return {
      published: (records) => {
        const now = Date.now();
        this.published.inc(records.length);
        for (const record of records) {
          const seconds = (now - committedAt(record)) / 1000;
          // created_at may be 'infinity' or BC: such rows have no meaningful latency.
          if (Number.isFinite(seconds)) this.deliveryLatency.observe(Math.max(0, seconds));
        }
      },
      batchDelivered: ({ rejected, durationMs }) => {
        for (const { record } of rejected) this.failed.inc({ event_type: this.eventTypeLabel(record) });
        this.batchDuration.observe(durationMs / 1000);
      },
      publishFailed: (records) => {
        for (const record of records) this.failed.inc({ event_type: this.eventTypeLabel(record) });
      },
      inFlight: (events) => this.inFlight.set(events),
    };
  }

  recordRole(role: RelayRole): void {
    this.active.set(role === 'active' ? 1 : 0);
  }

  recordOutboxStatus(status: OutboxStatus): void {
    this.pending.set(status.pending);
    this.deadLetters.set(status.deadLetters);
    this.oldestPendingAge.set(status.oldestPendingAgeSeconds);
  }

  recordSlotStatus(status: SlotStatus): void {
    if (this.slot === undefined) return;
    if (!status.exists) {
      // No slot, no figures: a lag of 0 would read as "all delivered" on a dashboard. Alert on the slot's absence.
      this.clearSlotGauges();
      this.slot.active.set(0);
      return;
    }
    this.slot.active.set(status.active ? 1 : 0);
    setOrRemove(this.slot.lag, status.lagBytes);
    setOrRemove(this.slot.retained, status.retainedWalBytes);
    // Without max_slot_wal_keep_size the server gives no limit: report it as unbounded, not as 0 bytes left.
    this.slot.safeWalSize.set(status.safeWalSizeBytes ?? Number.POSITIVE_INFINITY);
    for (const walStatus of WAL_STATUSES) {
      this.slot.walStatus.set({ status: walStatus }, status.walStatus === walStatus ? 1 : 0);
    }
  }

  /** outbox_relay_ready follows `isReady`, read at each scrape (so it is never stale). */
  trackReadiness(isReady: () => boolean): void {
    this.isReady = isReady;
  }

  private clearSlotGauges(): void {
    if (this.slot === undefined) return;
    this.slot.lag.remove();
    this.slot.retained.remove();
    this.slot.safeWalSize.remove();
    this.slot.walStatus.reset();
  }

  private eventTypeLabel(record: OutboxRecord): string {
    if (this.eventTypes.has(record.eventType)) return record.eventType;
    if (this.eventTypes.size >= MAX_EVENT_TYPE_LABELS) return 'other';
    this.eventTypes.add(record.eventType);
    return record.eventType;
  }
}

function setOrRemove(gauge: Gauge, value: number | null): void {
  if (value === null) gauge.remove();
  else gauge.set(value);
}

function committedAt(record: OutboxRecord): number {
  return record.committedAtMs ?? Date.parse(record.createdAt);
}
