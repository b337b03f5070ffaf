import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';

import type { OutboxRecord } from '../../../src/core/outboxRecord.js';
import type { SlotStatus } from '../../../src/db/readSlotStatus.js';
import { RelayMetrics } from '../../../src/observability/relayMetrics.js';

function record(eventType: string, committedAtMs?: number): OutboxRecord {
  return {
    id: '00000000-0000-0000-0000-000000000001',
    aggregateType: 'order',
    aggregateId: 'o-1',
    eventType,
    payload: '{}',
    headers: null,
    createdAt: new Date().toISOString(),
    seq: '1',
    committedAtMs,
  };
}

/** A streaming slot with every figure known. */
const SLOT: SlotStatus = {
  slot: 's',
  exists: true,
  active: true,
  activePid: 1,
  activeReader: null,
  lagBytes: 10,
  retainedWalBytes: 20,
  walStatus: 'reserved',
  safeWalSizeBytes: 30,
  confirmedFlushLsn: '0/1',
  restartLsn: '0/1',
  plugin: 'pgoutput',
  failover: null,
};

async function sample(
  metrics: RelayMetrics,
  name: string,
  labels: Record<string, string> = {},
): Promise<number> {
  const metric = (await metrics.registry.getMetricsAsJSON()).find((m) => m.name === name);
  // Histogram buckets are the values named <name>_bucket, with a numeric `le`.
  const series = 'le' in labels ? `${name}_bucket` : name;
  const value = metric?.values.find(
    (v) =>
      ((v as { metricName?: string }).metricName ?? name) === series &&
      Object.entries(labels).every(([k, l]) => String((v.labels as Record<string, unknown>)[k]) === l),
  );
  return value?.value ?? Number.NaN;
}

describe('RelayMetrics', () => {
  it('counts published events, their latency and the batch duration', async () => {
    const metrics = new RelayMetrics('wal');
    const published = [record('a', Date.now() - 2_000), record('a', Date.now() - 2_000)];
    metrics.observer().published?.(published);
    metrics.observer().batchDelivered?.({
      published,
      rejected: [{ record: record('huge'), reason: 'too large' }],
      skipped: 0,
      durationMs: 40,
    });
    assert.equal(await sample(metrics, 'outbox_events_published_total'), 2);
    assert.equal(await sample(metrics, 'outbox_events_failed_total', { event_type: 'huge' }), 1);
    assert.equal(await sample(metrics, 'outbox_delivery_latency_seconds', { le: '1' }), 0);
    assert.equal(await sample(metrics, 'outbox_delivery_latency_seconds', { le: '2.5' }), 2);
    assert.equal(await sample(metrics, 'outbox_batch_duration_seconds', { le: '0.05' }), 1);
  });

  it('skips the latency of a row whose created_at is not a finite time (infinity, BC dates)', async () => {
    const metrics = new RelayMetrics('poll');
    metrics.observer().published?.([{ ...record('a'), createdAt: 'infinity' }]);
    assert.equal(await sample(metrics, 'outbox_events_published_total'), 1);
    assert.equal(await sample(metrics, 'outbox_delivery_latency_seconds', { le: '+Inf' }), 0);
  });

  it('keeps the event_type label bounded: past 100 types, the rest count as "other"', async () => {
    const metrics = new RelayMetrics('poll');
    const observer = metrics.observer();
    for (let i = 0; i < 150; i++) observer.publishFailed?.([record(`type-${String(i)}`)]);
    const failed = (await metrics.registry.getMetricsAsJSON()).find(
      (m) => m.name === 'outbox_events_failed_total',
    );
    assert.equal(failed?.values.length, 101);
    assert.equal(await sample(metrics, 'outbox_events_failed_total', { event_type: 'other' }), 50);
  });

  it('sets one wal_status series to 1, reports a missing limit as unbounded, and has no slot metrics in poll mode', async () => {
    const metrics = new RelayMetrics('wal');
    metrics.recordSlotStatus({ ...SLOT, walStatus: 'extended', safeWalSizeBytes: null });
    assert.equal(await sample(metrics, 'outbox_replication_slot_wal_status', { status: 'extended' }), 1);
    assert.equal(await sample(metrics, 'outbox_replication_slot_wal_status', { status: 'reserved' }), 0);
    assert.equal(
      await sample(metrics, 'outbox_replication_slot_safe_wal_size_bytes'),
      Number.POSITIVE_INFINITY,
    );
    const poll = new RelayMetrics('poll');
    const names = (await poll.registry.getMetricsAsJSON()).map((m) => m.name);
    assert.ok(!names.some((n) => n.startsWith('outbox_replication_slot_')));
    assert.ok(names.includes('outbox_events_pending'));
  });

  it('leaves the slot figures absent (not 0) before the first sample and while the slot is missing', async () => {
    const metrics = new RelayMetrics('wal');
    const slotSeries = async (): Promise<string[]> =>
      (await metrics.registry.metrics())
        .split('\n')
        .filter((l) => /^outbox_replication_slot_(lag|retained|safe|wal_status)/.test(l));
    assert.deepEqual(await slotSeries(), []);
    const present = SLOT;
    metrics.recordSlotStatus(present);
    assert.equal((await slotSeries()).length, 7);
    metrics.recordSlotStatus({
      ...present,
      exists: false,
      active: false,
      activePid: null,
      lagBytes: null,
      retainedWalBytes: null,
      walStatus: null,
      safeWalSizeBytes: null,
    });
    assert.deepEqual(await slotSeries(), []);
    assert.equal(await sample(metrics, 'outbox_replication_slot_active'), 0);
  });

  it('exports readiness at scrape time and the build info', async () => {
    const metrics = new RelayMetrics('poll');
    let ready = false;
    metrics.trackReadiness(() => ready);
    assert.equal(await sample(metrics, 'outbox_relay_ready'), 0);
    ready = true;
    assert.equal(await sample(metrics, 'outbox_relay_ready'), 1);
    const version = (
      JSON.parse(readFileSync(join(__dirname, '..', '..', '..', '..', 'package.json'), 'utf8')) as {
        version: string;
      }
    ).version;
    assert.equal(
      await sample(metrics, 'outbox_relay_build_info', { version, node_version: process.versions.node }),
      1,
    );
  });

  it('reports the role: outbox_relay_active is 1 only while delivering', async () => {
    const metrics = new RelayMetrics('wal');
    assert.equal(await sample(metrics, 'outbox_relay_active'), 0);
    metrics.recordRole('active');
    assert.equal(await sample(metrics, 'outbox_relay_active'), 1);
    metrics.recordRole('standby');
    assert.equal(await sample(metrics, 'outbox_relay_active'), 0);
  });
});
