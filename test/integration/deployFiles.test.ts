import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';

import { RelayMetrics } from '../../src/observability/relayMetrics.js';

const ROOT = join(__dirname, '..', '..', '..');
const ALERTS = join(ROOT, 'deploy', 'prometheus', 'alerts.yml');
const DASHBOARD = join(ROOT, 'deploy', 'grafana', 'walbox.json');

/** PromQL words that are not metric names. */
const PROMQL_WORDS = new Set([
  'sum',
  'max',
  'min',
  'avg',
  'count',
  'rate',
  'irate',
  'increase',
  'deriv',
  'histogram_quantile',
  'and',
  'or',
  'unless',
  'offset',
]);

/** The metric names an expression reads: what is left once labels, ranges, strings and functions are gone. */
function metricNames(expr: string): string[] {
  const bare = expr
    .replace(/"[^"]*"/g, '')
    .replace(/\{[^}]*\}/g, '')
    .replace(/\[[^\]]*\]/g, '')
    .replace(/\b(by|without|on|ignoring)\s*\([^)]*\)/g, '');
  return [...bare.matchAll(/[a-zA-Z_:][a-zA-Z0-9_:]*/g)].map((m) => m[0]).filter((t) => !PROMQL_WORDS.has(t));
}

/** Every series name walbox exports (histograms as _bucket, _sum and _count), plus Prometheus's own `up`. */
async function exportedNames(): Promise<Set<string>> {
  const metrics = new RelayMetrics('wal');
  const names = new Set(['up']);
  for (const metric of await metrics.registry.getMetricsAsJSON()) {
    names.add(metric.name);
    if (String(metric.type) === 'histogram') {
      for (const suffix of ['_bucket', '_sum', '_count']) names.add(`${metric.name}${suffix}`);
    }
  }
  return names;
}

describe('deploy/ files', () => {
  it('promtool accepts the alert rules', () => {
    const result = spawnSync('promtool', ['check', 'rules', ALERTS], { encoding: 'utf8' });
    assert.ok(
      result.error === undefined,
      `promtool is missing (${String(result.error)}): install Debian's prometheus package (npm test does as root)`,
    );
    assert.equal(result.status, 0, result.stdout + result.stderr);
    assert.match(result.stdout, /SUCCESS: 8 rules found/);
  });

  it('the rules and the dashboard only use metrics walbox exports (or up)', async () => {
    const exported = await exportedNames();
    const ruleExprs = [...readFileSync(ALERTS, 'utf8').matchAll(/^\s*expr:\s*(.+)$/gm)].map(
      (m) => m[1] ?? '',
    );
    const dashboard = JSON.parse(readFileSync(DASHBOARD, 'utf8')) as {
      panels: { title: string; targets: { expr: string }[] }[];
    };
    const dashboardExprs = dashboard.panels.flatMap((p) => p.targets.map((t) => t.expr));
    assert.ok(ruleExprs.length >= 7 && dashboardExprs.length >= 10);
    const used = new Set([...ruleExprs, ...dashboardExprs].flatMap(metricNames));
    const unknown = [...used].filter((name) => !exported.has(name));
    assert.deepEqual(unknown, []);
    // Every SPEC metric is on the dashboard somewhere.
    for (const name of exported) {
      if (!name.startsWith('outbox_') || /_(bucket|sum|count)$/.test(name)) continue;
      const onDashboard = dashboardExprs.some((e) => metricNames(e).some((m) => m.startsWith(name)));
      assert.ok(onDashboard, `${name} is not on the dashboard`);
    }
  });

  it('the alert rules cover SPEC §Observability', () => {
    const text = readFileSync(ALERTS, 'utf8');
    for (const expected of [
      /outbox_events_pending > 1000/,
      /deriv\(outbox_events_pending/,
      /outbox_events_dead_letters > 0/,
      /histogram_quantile\(0\.95, .*outbox_batch_duration_seconds_bucket.*\) > 5/,
      /outbox_replication_slot_lag_bytes >/,
      /outbox_replication_slot_wal_status\{status="reserved"\} == 0/,
      /up\{job="walbox"\} == 0/,
      /sum\(outbox_relay_active\{job="walbox"\}\) == 0/,
    ]) {
      assert.match(text, expected);
    }
  });
});
