import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';

import { parse } from 'yaml';

import { OPTION_SPECS, toEnvName } from '../../src/config/configSchema.js';

const ROOT = join(__dirname, '..', '..', '..');

interface ComposeService {
  image?: string;
  build?: string;
  command?: string[];
  entrypoint?: string[];
  environment?: Record<string, string | number>;
  ports?: string[];
  profiles?: string[];
  healthcheck?: { test?: string[]; disable?: boolean };
  pull_policy?: string;
  depends_on?: Record<string, { condition: string }> | string[];
  volumes?: string[];
}

const compose = parse(readFileSync(join(ROOT, 'docker-compose.yml'), 'utf8')) as {
  services: Record<string, ComposeService>;
};
const service = (name: string): ComposeService => {
  const found = compose.services[name];
  assert.ok(found !== undefined, `docker-compose.yml has no service ${name}`);
  return found;
};

/** Environment names walbox reads: WALBOX_<FLAG> per option, their fallbacks, and the demo writer's. */
const KNOWN_ENV = new Set([
  ...OPTION_SPECS.map((s) => toEnvName(s.flag)),
  ...OPTION_SPECS.flatMap((s) => (s.fallbackEnv === undefined ? [] : [s.fallbackEnv])),
  'DEMO_RATE',
]);

describe('packaging', () => {
  it('docker-compose.yml: PostgreSQL 16 with wal_level=logical, Kafka 4.x in KRaft mode, walbox, the demo writer', () => {
    const postgres = service('postgres');
    assert.match(postgres.image ?? '', /^postgres:16/);
    assert.ok(postgres.command?.includes('wal_level=logical'), 'postgres runs without wal_level=logical');
    assert.ok(postgres.healthcheck !== undefined);

    const kafka = service('kafka');
    assert.match(kafka.image ?? '', /^apache\/kafka:4\./);
    assert.equal(kafka.environment?.['KAFKA_PROCESS_ROLES'], 'broker,controller');
    // Containers reach the broker as kafka:9092, tools on the host as localhost:29092.
    assert.equal(
      kafka.environment['KAFKA_ADVERTISED_LISTENERS'],
      'PLAINTEXT://kafka:9092,HOST://localhost:29092',
    );
    assert.ok(kafka.ports?.includes('127.0.0.1:29092:29092'));
    assert.match(String(kafka.environment['KAFKA_LISTENERS']), /HOST:\/\/:29092/);

    // One image, built once (by walbox-migrate), run by the three.
    assert.equal(service('walbox-migrate').build, '.');
    for (const name of ['walbox-migrate', 'walbox', 'demo-writer']) {
      assert.equal(service(name).image, 'walbox:local', name);
      if (name !== 'walbox-migrate') {
        assert.equal(service(name).build, undefined, `${name} builds the image again`);
        assert.equal(service(name).pull_policy, 'never', `${name} would try to pull walbox:local`);
      }
    }
    // The image's HEALTHCHECK asks walbox's /healthz: the demo writer serves none.
    assert.deepEqual(service('demo-writer').healthcheck, { disable: true });

    const walbox = service('walbox');
    assert.deepEqual(walbox.command, ['run']);
    assert.ok(walbox.ports?.includes('127.0.0.1:9464:9464'));
    assert.deepEqual(service('walbox-migrate').command, ['migrate']);
    assert.deepEqual(service('demo-writer').entrypoint, ['node', 'dist/demo/main.js']);
    for (const name of ['walbox', 'walbox-migrate', 'demo-writer']) {
      const s = service(name);
      for (const key of Object.keys(s.environment ?? {})) {
        assert.ok(KNOWN_ENV.has(key), `${name} sets ${key}, which walbox does not read`);
      }
      assert.match(
        String(s.environment?.['DATABASE_URL']),
        /^postgres:\/\/walbox:[^@]+@postgres:5432\/walbox$/,
      );
    }
    assert.equal(service('walbox').environment?.['KAFKA_BROKERS'], 'kafka:9092');
    // The metrics port the container exposes is the one walbox serves.
    assert.equal(service('walbox').environment?.['WALBOX_METRICS_PORT'], '9464');
  });

  it('docker-compose.yml: Prometheus and Grafana under the monitoring profile, with the shipped rules and dashboard', () => {
    const prometheus = service('prometheus');
    assert.deepEqual(prometheus.profiles, ['monitoring']);
    assert.ok(prometheus.volumes?.includes('./deploy/prometheus/alerts.yml:/etc/prometheus/alerts.yml:ro'));
    const grafana = service('grafana');
    assert.deepEqual(grafana.profiles, ['monitoring']);
    assert.ok(grafana.volumes?.some((v) => v.startsWith('./deploy/grafana/walbox.json:')));

    // promtool accepts the Prometheus config once the rules path points at the repository's file.
    const dir = mkdtempSync(join(tmpdir(), 'walbox-prom-'));
    try {
      const config = readFileSync(join(ROOT, 'deploy', 'prometheus', 'prometheus.yml'), 'utf8').replace(
        '/etc/prometheus/alerts.yml',
        join(ROOT, 'deploy', 'prometheus', 'alerts.yml'),
      );
      writeFileSync(join(dir, 'prometheus.yml'), config);
      const result = spawnSync('promtool', ['check', 'config', join(dir, 'prometheus.yml')], {
        encoding: 'utf8',
      });
      assert.ok(result.error === undefined, `promtool is missing: install Debian's prometheus package`);
      assert.equal(result.status, 0, result.stdout + result.stderr);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    const scrape = parse(readFileSync(join(ROOT, 'deploy', 'prometheus', 'prometheus.yml'), 'utf8')) as {
      scrape_configs: { job_name: string; static_configs: { targets: string[] }[] }[];
    };
    const [job] = scrape.scrape_configs;
    assert.equal(job?.job_name, 'walbox', 'the alert rules expect job="walbox"');
    assert.deepEqual(job.static_configs[0]?.targets, ['walbox:9464']);
  });

  it('Dockerfile: multi-stage, non-root, HEALTHCHECK on /healthz with node, the CLI as entrypoint', () => {
    const text = readFileSync(join(ROOT, 'Dockerfile'), 'utf8');
    const stages = text.match(/^FROM /gm) ?? [];
    assert.ok(stages.length >= 2, 'not a multi-stage build');
    const runtime = text.slice(text.lastIndexOf('\nFROM '));
    assert.match(runtime, /^USER node$/m);
    assert.match(runtime, /^HEALTHCHECK [\s\S]*CMD \["node", "-e", ".*\/healthz/m);
    const instructions = text
      .split('\n')
      .filter((line) => !line.trimStart().startsWith('#'))
      .join('\n');
    assert.doesNotMatch(instructions, /curl|wget/);
    assert.match(runtime, /^ENTRYPOINT \["node", "dist\/cli\/main\.js"\]$/m);
    assert.match(runtime, /WALBOX_METRICS_HOST=0\.0\.0\.0/);
    // The heap bounds the bench measures the relay with (docs/performance.md, "Large events").
    assert.match(runtime, /^\s+NODE_OPTIONS="--max-semi-space-size=\d+ --max-old-space-size=\d+" \\$/m);
    // The runtime stage copies node_modules from a build stage that pruned the dev dependencies.
    assert.match(instructions, /npm prune --omit=dev/, 'dev dependencies in the image');
    assert.match(runtime, /COPY --from=build .*\/app\/node_modules/);
    // Every WALBOX_* the image sets is an option walbox reads.
    for (const [, name] of runtime.matchAll(/(WALBOX_[A-Z_]+)=/g)) {
      assert.ok(KNOWN_ENV.has(name ?? ''), `Dockerfile sets ${String(name)}, which walbox does not read`);
    }
  });

  it('package.json names the repository, homepage and bug tracker; the alert runbooks link into that repository', () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
      homepage?: string;
      repository?: { url?: string };
      bugs?: { url?: string };
    };
    const base = /^git\+(https:\/\/github\.com\/[\w-]+\/[\w-]+)\.git$/.exec(pkg.repository?.url ?? '')?.[1];
    assert.ok(base !== undefined, `repository.url ${String(pkg.repository?.url)}`);
    assert.equal(pkg.homepage, `${base}#readme`);
    assert.equal(pkg.bugs?.url, `${base}/issues`);
    const alerts = readFileSync(join(ROOT, 'deploy', 'prometheus', 'alerts.yml'), 'utf8');
    for (const [, url] of alerts.matchAll(/runbook_url: (\S+)/g)) {
      assert.ok(url?.startsWith(`${base}/blob/main/docs/operations.md#`), url);
    }
  });

  it('npm pack ships dist, sql, README, LICENSE and package.json, and nothing else', () => {
    // What `prepack` does before a real pack: compile dist/ from this checkout.
    const build = spawnSync('npm', ['run', 'build'], { cwd: ROOT, encoding: 'utf8' });
    assert.equal(build.status, 0, build.stdout + build.stderr);
    const result = spawnSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {
      cwd: ROOT,
      encoding: 'utf8',
    });
    assert.equal(result.status, 0, result.stderr);
    const [pack] = JSON.parse(result.stdout) as { files: { path: string }[] }[];
    const files = (pack?.files ?? []).map((f) => f.path);
    const stray = files.filter(
      (f) => !/^(dist\/|sql\/)/.test(f) && !['README.md', 'LICENSE', 'package.json'].includes(f),
    );
    assert.deepEqual(stray, []);
    for (const needed of [
      'LICENSE',
      'README.md',
      'package.json',
      'dist/cli/main.js',
      'dist/index.js',
      'dist/index.d.ts',
      'dist/demo/main.js',
      'sql/000001_create_outbox.sql',
      'sql/consumer/000001_create_processed_events.sql',
      'sql/optional/notify_trigger.sql',
    ]) {
      assert.ok(files.includes(needed), `the package lacks ${needed}`);
    }
    assert.ok(
      !files.some((f) => f.endsWith('.test.js') || f.startsWith('dist/test')),
      'tests in the package',
    );
    assert.match(readFileSync(join(ROOT, 'LICENSE'), 'utf8'), /Apache License\s+Version 2\.0/);
  });
});
