// Turns a benchmark run into bench/results/<date>.json, a Markdown table, an SVG chart and docs/performance.md.
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';

import { KAFKA_VERSION } from '../stack/kafka.mjs';
import { readRelayEnv, readRelayNodeOptions } from './relaySettings.mjs';

/** walbox's performance targets, reported (never asserted). */
const TARGETS = [
  'WAL drain (1 event per transaction) ≥ 2× Debezium tuned',
  'WAL drain (1 event per transaction) ≥ 0.7× kafkajs alone',
  'relay RSS ≤ 150 MB (every walbox run, the 8 KB backlog included)',
  'p99 ≤ 20 ms at 1k events/s, in every repeat',
];

export function describeMachine(root, state) {
  const pgVersion = spawnSync(join(state.postgres.bin, 'postgres'), ['--version'], { encoding: 'utf8' });
  return {
    cpus: os.cpus().length,
    cpuModel: os.cpus()[0]?.model ?? 'unknown',
    memoryGiB: Math.round(os.totalmem() / 1024 ** 3),
    os: `${os.type()} ${os.release()}`,
    node: process.version,
    relay: {
      node: process.env.BENCH_WALBOX_NODE
        ? spawnSync(process.env.BENCH_WALBOX_NODE, ['--version'], { encoding: 'utf8' }).stdout.trim()
        : process.version,
      options: readRelayNodeOptions().join(' '),
      environment: Object.entries(readRelayEnv())
        .map(([name, value]) => `${name}=${value}`)
        .join(' '),
    },
    postgres: pgVersion.stdout.trim(),
    kafka: KAFKA_VERSION,
    clients: Object.fromEntries(
      ['kafkajs', '@platformatic/kafka'].map((name) => [name, readPackageVersion(root, name)]),
    ),
  };
}

function describeRelayNode(relay) {
  if (relay === undefined) return '';
  const options = relay.options === '' ? "Node's defaults" : `\`${relay.options}\``;
  const environment = relay.environment ? ` and \`${relay.environment}\`` : '';
  return `walbox runs on Node ${relay.node} with ${options}${environment}. `;
}

function readPackageVersion(root, name) {
  return JSON.parse(readFileSync(join(root, 'node_modules', name, 'package.json'), 'utf8')).version;
}

const CEILING_LABELS = {
  pgRecvlogical: 'ceiling: pg_recvlogical (decoding)',
  producerPerformance: 'ceiling: ProducerPerformance (Java client)',
  kafkajs: 'ceiling: kafkajs alone (same client as walbox)',
  platformatic: 'ceiling: @platformatic/kafka alone (another client)',
};

const CLIENT_NAMES = { kafkajs: 'kafkajs', platformatic: '@platformatic/kafka' };

const fmt = (n) => (n === null || n === undefined ? '—' : String(n));

function ratio(a, b) {
  return a && b ? `${(a / b).toFixed(2)}×` : '—';
}

/** The run of `name` in a workload, when it completed. */
function runOf(workload, name) {
  return workload.runs.find((r) => r.system === name && r.complete);
}

export function renderMarkdown(result) {
  const { machine } = result;
  const clients = Object.entries(machine.clients ?? {})
    .map(([name, version]) => `${name} ${version}`)
    .join(', ');
  const lines = [
    `Run ${result.date}${result.quick ? ' (quick)' : ''} on ${machine.cpus} × ${machine.cpuModel}, ` +
      `${machine.memoryGiB} GiB, ${machine.os}; Node ${machine.node}, ${machine.postgres}, ` +
      `Kafka ${machine.kafka}; clients ${clients}. ${describeRelayNode(machine.relay)}` +
      'Every system runs on this one machine with the broker and the database.',
    '',
    '| workload | system | events/s | walbox WAL ÷ this | latency p50 / p95 / p99 ms | CPU s | peak RSS MiB | peak slot lag MiB | all arrived |',
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- |',
  ];
  for (const w of result.workloads) {
    const wal = runOf(w, 'walbox WAL');
    for (const [name, value] of Object.entries(w.ceilings ?? {})) {
      const label = CEILING_LABELS[name] ?? name;
      lines.push(
        `| ${w.title} | ${label} | ${fmt(value)} | ${ratio(wal?.eventsPerSecond, value)} | — | — | — | — | — |`,
      );
    }
    for (const r of w.runs) {
      const latency = r.latencyMs ? `${r.latencyMs.p50} / ${r.latencyMs.p95} / ${r.latencyMs.p99}` : '—';
      const arrived = r.error
        ? `failed: ${r.error}`
        : r.complete
          ? `yes (${r.delivered})`
          : `**no: ${r.delivered} of ${r.expected} (invalid)**`;
      const vs =
        r.system === 'walbox WAL' || w.kind !== 'drain'
          ? '—'
          : ratio(wal?.eventsPerSecond, r.eventsPerSecond);
      lines.push(
        `| ${w.title} | ${runName(w, r)} | ${fmt(r.eventsPerSecond)} | ${vs} | ${latency} | ${fmt(r.cpuSeconds)} | ${fmt(r.peakRssMiB)} | ${fmt(r.peakSlotLagMiB)} | ${arrived} |`,
      );
    }
  }
  const costed = result.workloads.flatMap((w) =>
    w.runs.filter((r) => r.complete && r.perEvent).map((r) => ({ w, r })),
  );
  if (costed.length > 0) {
    lines.push(
      '',
      'Cost per delivered event (µs of CPU; in the drains from the system’s start to its last append, in the ' +
        'rate runs over the measured window, where PostgreSQL’s share includes the writers’ inserts; in the drains ' +
        'the bench process only counts records by their offsets and reads them after the last append, in the ' +
        'rate runs its consumer records every append):',
      '',
      '| workload | system | relay | PostgreSQL | broker | bench | whole machine, busy | WAL written, bytes |',
      '| --- | --- | --- | --- | --- | --- | --- | --- |',
    );
    for (const { w, r } of costed) {
      const c = r.perEvent;
      lines.push(
        `| ${w.title} | ${runName(w, r)} | ${c.relayCpuMicros} | ${c.postgresCpuMicros} | ${c.brokerCpuMicros} | ${c.benchCpuMicros} | ${c.machineBusyMicros} | ${c.walBytes} |`,
      );
    }
  }
  const clientRuns = result.workloads.filter((w) => w.clients !== undefined);
  if (clientRuns.length > 0) {
    lines.push(
      '',
      'The Kafka clients alone (the same records, 200 per send, acks=all, one request in flight; each run, ' +
        'alternately; µs: the sending process’s CPU per record):',
      '',
      '| workload | client | records/s | µs CPU per record |',
      '| --- | --- | --- | --- |',
    );
    for (const w of clientRuns) {
      for (const [name, list] of Object.entries(w.clients)) {
        for (const c of list) {
          lines.push(
            `| ${w.title} | ${CLIENT_NAMES[name] ?? name} | ${c.recordsPerSecond} | ${c.cpuMicrosPerRecord} |`,
          );
        }
      }
    }
  }
  lines.push('', 'Targets, where this run stands:', '');
  for (const line of assessTargets(result)) lines.push(`- ${line}`);
  return `${lines.join('\n')}\n`;
}

function runName(workload, run) {
  return (workload.repeats ?? 1) > 1 && run.repeat !== undefined
    ? `${run.system} (run ${run.repeat})`
    : run.system;
}

export function assessTargets(result) {
  const drain = result.workloads.find((w) => w.id === 'drain1');
  const rate = result.workloads.find((w) => w.id === 'rate1k');
  const wal = drain && runOf(drain, 'walbox WAL');
  const dbz = drain && (runOf(drain, 'Debezium tuned') ?? runOf(drain, 'Debezium'));
  const kafkajs = drain?.ceilings.kafkajs;
  const rss = Math.max(
    ...result.workloads.flatMap((w) =>
      w.runs.filter((r) => r.system.startsWith('walbox')).map((r) => r.peakRssMiB ?? 0),
    ),
  );
  const p99s = (rate?.runs ?? [])
    .filter((r) => r.system === 'walbox WAL')
    .map((r) => (r.complete && r.latencyMs ? r.latencyMs.p99 : Infinity));
  const verdict = (ok) => (ok ? 'met' : 'missed');
  const dbzRatio = wal && dbz ? wal.eventsPerSecond / dbz.eventsPerSecond : null;
  const kafkajsRatio = wal && kafkajs ? wal.eventsPerSecond / kafkajs : null;
  return [
    `${TARGETS[0]}: ${dbzRatio === null ? 'not measured' : `${dbzRatio.toFixed(2)}× ${dbz.system} (${verdict(dbzRatio >= 2)})`}`,
    `${TARGETS[1]}: ${kafkajsRatio === null ? 'not measured' : `${kafkajsRatio.toFixed(2)}× (${verdict(kafkajsRatio >= 0.7)})`}`,
    `${TARGETS[2]}: peak ${rss} MiB = ${Math.round(rss * 1.048576)} MB (${verdict(rss * 1.048576 <= 150)})`,
    `${TARGETS[3]}: ${p99s.length === 0 ? 'not measured' : `p99 ${p99s.map((p) => (p === Infinity ? 'incomplete' : `${p} ms`)).join(', ')} over ${p99s.length} runs (${verdict(p99s.every((p) => p <= 20))})`}`,
  ];
}

/** Horizontal bars: drain throughput per system and ceiling, one group per drain workload. */
export function renderSvg(result) {
  const bars = [];
  for (const w of result.workloads.filter((x) => x.kind === 'drain')) {
    bars.push({ group: w.title });
    for (const [name, value] of Object.entries(w.ceilings)) {
      bars.push({
        label: CEILING_LABELS[name] ?? name,
        value,
        ceiling: true,
      });
    }
    for (const r of w.runs) bars.push({ label: r.system, value: r.complete ? r.eventsPerSecond : 0 });
  }
  const max = Math.max(1, ...bars.map((b) => b.value ?? 0));
  const rowHeight = 22;
  const left = 300;
  const width = 900;
  const height = 40 + bars.length * rowHeight;
  const rows = bars.map((b, i) => {
    const y = 30 + i * rowHeight;
    if (b.group) return `<text x="10" y="${y + 15}" font-weight="bold">${escapeXml(b.group)}</text>`;
    const w = Math.round(((b.value ?? 0) / max) * (width - left - 90));
    const color = b.ceiling ? '#9aa5b1' : b.label.startsWith('walbox') ? '#2f6fdf' : '#e08a2e';
    return (
      `<text x="${left - 8}" y="${y + 15}" text-anchor="end">${escapeXml(b.label)}</text>` +
      `<rect x="${left}" y="${y + 3}" width="${w}" height="${rowHeight - 6}" fill="${color}"/>` +
      `<text x="${left + w + 6}" y="${y + 15}">${b.value ? `${b.value} ev/s` : 'incomplete'}</text>`
    );
  });
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" font-family="sans-serif" font-size="12">`,
    `<text x="10" y="18" font-size="14">walbox drain throughput (events/s), ${escapeXml(result.date)}${result.quick ? ' quick' : ''}</text>`,
    ...rows,
    '</svg>',
    '',
  ].join('\n');
}

function escapeXml(text) {
  return String(text).replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');
}

/** A partial run (quick, some workloads, no Debezium) is written next to the others but never becomes the docs' latest. */
export function writeReports({ root, quick, partial = false, workloads, state }) {
  const date = new Date().toISOString().slice(0, 10);
  const result = { date, quick, machine: describeMachine(root, state), workloads };
  const dir = join(root, 'bench', 'results');
  mkdirSync(dir, { recursive: true });
  const stem = join(dir, `${date}${partial ? '-partial' : quick ? '-quick' : ''}`);
  const markdown = renderMarkdown(result);
  writeFileSync(`${stem}.json`, `${JSON.stringify(result, null, 2)}\n`);
  writeFileSync(`${stem}.md`, markdown);
  writeFileSync(`${stem}.svg`, renderSvg(result));
  const files = [`${stem}.json`, `${stem}.md`, `${stem}.svg`];
  if (!quick && !partial) {
    updatePerformanceDoc(root, markdown, date);
    files.push('docs/performance.md');
  }
  process.stdout.write(markdown);
  return files;
}

/** Replaces the generated section of docs/performance.md (between the markers) and formats the file. */
function updatePerformanceDoc(root, markdown, date) {
  const doc = join(root, 'docs', 'performance.md');
  const text = readFileSync(doc, 'utf8');
  const start = '<!-- bench:latest -->';
  const end = '<!-- /bench:latest -->';
  const before = text.slice(0, text.indexOf(start) + start.length);
  const after = text.slice(text.indexOf(end));
  copyFileSync(join(root, 'bench', 'results', `${date}.svg`), join(root, 'docs', 'performance.svg'));
  writeFileSync(doc, `${before}\n\n${markdown}\n![drain throughput](performance.svg)\n\n${after}`);
  spawnSync(join(root, 'node_modules', '.bin', 'prettier'), ['--write', doc], { stdio: 'ignore' });
}
