import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';

import { parse } from 'yaml';

import { OPTION_SPECS, toEnvName } from '../../src/config/configSchema.js';
import { parseDuration } from '../../src/config/parseDuration.js';

const ROOT = join(__dirname, '..', '..', '..');
const DIR = join(ROOT, 'deploy', 'kubernetes');

interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: { secretKeyRef?: { name: string; key: string }; fieldRef?: { fieldPath: string } };
}
interface Probe {
  httpGet: { path: string; port: string | number };
}
interface Container {
  name: string;
  image: string;
  args: string[];
  env?: EnvVar[];
  ports?: { name: string; containerPort: number }[];
  livenessProbe?: Probe;
  readinessProbe?: Probe;
  startupProbe?: Probe;
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
  securityContext?: {
    allowPrivilegeEscalation?: boolean;
    readOnlyRootFilesystem?: boolean;
    capabilities?: { drop?: string[] };
  };
  volumeMounts?: { name: string; mountPath: string }[];
}
interface PodSpec {
  enableServiceLinks?: boolean;
  automountServiceAccountToken?: boolean;
  terminationGracePeriodSeconds?: number;
  securityContext?: { runAsNonRoot?: boolean };
  containers: Container[];
  volumes?: { name: string; secret?: { secretName: string; items?: { key: string; path: string }[] } }[];
}
interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: { name: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  spec: {
    replicas?: number;
    maxUnavailable?: number;
    selector?: { matchLabels: Record<string, string> } | Record<string, string>;
    strategy?: { rollingUpdate?: { maxUnavailable?: number } };
    template?: { metadata: { labels: Record<string, string> }; spec: PodSpec };
    ports?: { name: string; port: number; targetPort: string | number }[];
    endpoints?: { port: string; path: string }[];
    jobLabel?: string;
  };
}

function load(file: string): Manifest {
  return parse(readFileSync(join(DIR, file), 'utf8')) as Manifest;
}

function required<T>(value: T | undefined, what: string): T {
  assert.ok(value !== undefined, `deployment.yaml has no ${what}`);
  return value;
}

const deployment = load('deployment.yaml');
const template = required(deployment.spec.template, 'pod template');
const pod = template.spec;
const podLabels = template.metadata.labels;
const container = required(pod.containers[0], 'container');
const env = new Map((container.env ?? []).map((e) => [e.name, e]));

/** What the example Secret holds: the keys the manifests may reference. */
const secretKeys = new Set(
  Object.keys(
    (
      parse(readFileSync(join(DIR, 'secret.example.yaml'), 'utf8')) as {
        stringData: Record<string, string>;
      }
    ).stringData,
  ),
);

function matches(selector: Record<string, string>, labels: Record<string, string>): boolean {
  return Object.entries(selector).every(([k, v]) => labels[k] === v);
}

function envValue(name: string): string {
  const value = env.get(name)?.value;
  assert.ok(value !== undefined, `the Deployment does not set ${name}`);
  return value;
}

describe('deploy/kubernetes', () => {
  it('sets only real options, by their WALBOX_* names, and secrets only from the Secret', () => {
    const options = new Map(OPTION_SPECS.map((s) => [toEnvName(s.flag), s]));
    const fileVariants = new Map(
      OPTION_SPECS.filter((s) => s.secret === true).map((s) => [`${toEnvName(s.flag)}_FILE`, s]),
    );
    for (const job of [deployment, load('migrate-job.yaml')]) {
      for (const variable of job.spec.template?.spec.containers.flatMap((c) => c.env ?? []) ?? []) {
        const spec = options.get(variable.name) ?? fileVariants.get(variable.name);
        assert.ok(
          spec !== undefined,
          `${job.metadata.name} sets ${variable.name}, which walbox does not read`,
        );
        if (spec.secret === true && !variable.name.endsWith('_FILE')) {
          assert.ok(variable.value === undefined, `${variable.name} is a literal: take it from the Secret`);
          const ref = variable.valueFrom?.secretKeyRef;
          assert.ok(ref !== undefined, `${variable.name} must come from a secretKeyRef`);
          assert.ok(secretKeys.has(ref.key), `${variable.name}: the Secret has no key ${ref.key}`);
        }
      }
    }
    assert.ok(env.get('WALBOX_DATABASE_URL')?.valueFrom?.secretKeyRef !== undefined);
    assert.ok(env.get('WALBOX_KAFKA_SASL_USERNAME')?.valueFrom?.secretKeyRef !== undefined);
  });

  it('mounts every file it names from the Secret', () => {
    for (const name of ['WALBOX_KAFKA_SASL_PASSWORD_FILE', 'WALBOX_KAFKA_SSL_CA_FILE']) {
      const path = envValue(name);
      const mount = container.volumeMounts?.find((m) => path.startsWith(`${m.mountPath}/`));
      assert.ok(mount !== undefined, `${name}=${path} is on no mounted volume`);
      const volume = pod.volumes?.find((v) => v.name === mount.name);
      const item = volume?.secret?.items?.find((i) => path === `${mount.mountPath}/${i.path}`);
      assert.ok(
        item !== undefined && volume?.secret?.secretName === 'walbox',
        `${path} is not from the Secret`,
      );
      assert.ok(secretKeys.has(item.key), `the Secret has no key ${item.key}`);
    }
  });

  it('runs two relays, drains on SIGTERM before the kubelet kills, and never injects service links', () => {
    assert.equal(deployment.spec.replicas, 2);
    assert.equal(deployment.spec.strategy?.rollingUpdate?.maxUnavailable, 0);
    assert.deepEqual(container.args, ['run']);
    const shutdownMs = parseDuration(envValue('WALBOX_SHUTDOWN_TIMEOUT'));
    assert.ok(shutdownMs !== undefined);
    const grace = pod.terminationGracePeriodSeconds ?? 30;
    assert.ok(grace * 1000 > shutdownMs + 5_000, `grace ${grace}s is not above --shutdown-timeout`);
    assert.equal(pod.enableServiceLinks, false);
    assert.equal(pod.automountServiceAccountToken, false);
    assert.equal(pod.securityContext?.runAsNonRoot, true);
    assert.deepEqual(container.securityContext, {
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      capabilities: { drop: ['ALL'] },
    });
    const { requests = {}, limits = {} } = container.resources ?? {};
    assert.ok(requests['memory'] !== undefined && limits['memory'] !== undefined, 'memory request and limit');
    // The image's entrypoint is the CLI: `args`, not `command`, picks the subcommand.
    assert.ok(!('command' in container));
  });

  it('probes /healthz and /readyz on the port walbox serves its metrics on', () => {
    assert.equal(envValue('WALBOX_METRICS_HOST'), '0.0.0.0');
    const port = Number(envValue('WALBOX_METRICS_PORT'));
    const metrics = container.ports?.find((p) => p.name === 'metrics');
    assert.equal(metrics?.containerPort, port);
    assert.deepEqual(container.livenessProbe?.httpGet, { path: '/healthz', port: 'metrics' });
    assert.deepEqual(container.readinessProbe?.httpGet, { path: '/readyz', port: 'metrics' });
    assert.deepEqual(container.startupProbe?.httpGet, { path: '/healthz', port: 'metrics' });
  });

  it('has a PodDisruptionBudget, a Service and a ServiceMonitor that select the relays', () => {
    const pdb = load('pdb.yaml');
    assert.equal(pdb.kind, 'PodDisruptionBudget');
    assert.equal(pdb.spec.maxUnavailable, 1);
    const pdbSelector = pdb.spec.selector as { matchLabels: Record<string, string> };
    assert.ok(matches(pdbSelector.matchLabels, podLabels));
    const deploymentSelector = deployment.spec.selector as { matchLabels: Record<string, string> };
    assert.ok(matches(deploymentSelector.matchLabels, podLabels));

    const service = load('service.yaml');
    assert.equal(service.metadata.name, 'walbox');
    assert.ok(matches(service.spec.selector as Record<string, string>, podLabels));
    const [servicePort] = service.spec.ports ?? [];
    assert.deepEqual(servicePort, { name: 'metrics', port: 9464, targetPort: 'metrics' });
    assert.deepEqual(service.metadata.annotations, {
      'prometheus.io/scrape': 'true',
      'prometheus.io/port': envValue('WALBOX_METRICS_PORT'),
      'prometheus.io/path': '/metrics',
    });

    const monitor = load('servicemonitor.yaml');
    assert.equal(monitor.kind, 'ServiceMonitor');
    const monitorSelector = monitor.spec.selector as { matchLabels: Record<string, string> };
    assert.ok(matches(monitorSelector.matchLabels, service.metadata.labels ?? {}));
    assert.deepEqual(monitor.spec.endpoints, [{ port: 'metrics', path: '/metrics', interval: '15s' }]);
    // job="walbox", as the alert rules expect: the job label is taken from this Service label.
    assert.equal(service.metadata.labels?.[monitor.spec.jobLabel ?? ''], 'walbox');
  });

  it('lists files that exist in kustomization.yaml, and the image the Dockerfile builds', () => {
    const kustomization = parse(readFileSync(join(DIR, 'kustomization.yaml'), 'utf8')) as {
      resources: string[];
    };
    for (const file of kustomization.resources) assert.ok(existsSync(join(DIR, file)), `${file} is missing`);
    assert.ok(
      !kustomization.resources.includes('secret.example.yaml'),
      'the example Secret must not be applied',
    );
    const version = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string })
      .version;
    assert.equal(container.image, `walbox:${version}`);
    assert.deepEqual(load('migrate-job.yaml').spec.template?.spec.containers[0]?.args, ['migrate']);
  });
});
