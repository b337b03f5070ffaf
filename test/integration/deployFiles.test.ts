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
  'absent',
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
    assert.match(result.stdout, /SUCCESS: 13 rules found/);
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
    // Every query is filtered by the dashboard's job and instance variables.
    for (const expr of dashboardExprs) assert.match(expr, /job=~"\$job", instance=~"\$instance"/, expr);
    // Every outbox_* metric is on the dashboard somewhere.
    for (const name of exported) {
      if (!name.startsWith('outbox_') || /_(bucket|sum|count)$/.test(name)) continue;
      const onDashboard = dashboardExprs.some((e) => metricNames(e).some((m) => m.startsWith(name)));
      assert.ok(onDashboard, `${name} is not on the dashboard`);
    }
  });

  it('the alert rules cover what operators watch, each with a runbook in docs/operations.md', () => {
    const text = readFileSync(ALERTS, 'utf8');
    for (const expected of [
      /outbox_events_pending\{job="walbox"\}\) > 1000/,
      /deriv\(outbox_events_pending/,
      /outbox_events_dead_letters\{job="walbox"\}\) > 0/,
      /outbox_oldest_pending_age_seconds\{job="walbox"\}\) > 600/,
      /histogram_quantile\(0\.95, .*outbox_batch_duration_seconds_bucket.*\) > 5/,
      /outbox_replication_slot_lag_bytes\{job="walbox"\}\) >/,
      /status="extended"\}\) == 1/,
      /status=~"unreserved\|lost"\}\) == 1/,
      /up\{job="walbox"\} == 0/,
      /absent\(up\{job="walbox"\}\)/,
      /outbox_relay_ready\{job="walbox"\} == 0/,
      /outbox_replication_slot_active\{job="walbox"\}\) == 0/,
      /sum by \(job\) \(outbox_relay_active\{job="walbox"\}\) == 0/,
    ]) {
      assert.match(text, expected);
    }
    // Every rule links its runbook: a heading of docs/operations.md named after the alert.
    const alerts = [...text.matchAll(/^\s*- alert: (\w+)$/gm)].map((m) => m[1] ?? '');
    const runbooks = [...text.matchAll(/runbook_url: \S+\/docs\/operations\.md#(\S+)$/gm)].map((m) => m[1]);
    assert.deepEqual(
      runbooks,
      alerts.map((a) => a.toLowerCase()),
    );
    const headings = new Set(
      [...readFileSync(join(ROOT, 'docs', 'operations.md'), 'utf8').matchAll(/^#+ (.+)$/gm)].map((m) =>
        (m[1] ?? '')
          .toLowerCase()
          .replace(/[^a-z0-9 -]/g, '')
          .replace(/ /g, '-'),
      ),
    );
    for (const anchor of runbooks) assert.ok(headings.has(anchor), `no heading for #${anchor}`);
    // Every rule's severity is one Alertmanager routes on.
    for (const [, severity] of text.matchAll(/severity: (\S+)/g))
      assert.match(severity ?? '', /^(warning|critical)$/);
  });

  it('promtool unit tests of the main alerts pass (deploy/prometheus/alerts.test.yml)', () => {
    const result = spawnSync('promtool', ['test', 'rules', 'alerts.test.yml'], {
      cwd: join(ROOT, 'deploy', 'prometheus'),
      encoding: 'utf8',
    });
    assert.ok(result.error === undefined, `promtool is missing (${String(result.error)})`);
    assert.equal(result.status, 0, result.stdout + result.stderr);
    assert.match(result.stdout, /SUCCESS/);
  });
});
