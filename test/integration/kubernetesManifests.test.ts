import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';

import { parse } from 'yaml';

import { OPTION_SPECS, toEnvName } from '../../src/config/configSchema.js';
import { loadConfig } from '../../src/config/loadConfig.js';
import type { RelayConfig } from '../../src/config/relayConfig.js';
import { serviceLinks } from '../support/serviceLinks.js';

const ROOT = join(__dirname, '..', '..', '..');
const DIR = join(ROOT, 'deploy', 'kubernetes');

interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: { secretKeyRef?: { name: string; key: string }; fieldRef?: { fieldPath: string } };
}
interface Probe {
  httpGet: { path: string; port: string | number };
  periodSeconds?: number;
  failureThreshold?: number;
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
interface LabelSelector {
  matchLabels: Record<string, string>;
}
interface PodSpec {
  enableServiceLinks?: boolean;
  automountServiceAccountToken?: boolean;
  terminationGracePeriodSeconds?: number;
  securityContext?: { runAsNonRoot?: boolean; runAsUser?: number; seccompProfile?: { type: string } };
  affinity?: {
    podAntiAffinity?: {
      preferredDuringSchedulingIgnoredDuringExecution?: {
        podAffinityTerm: { topologyKey: string; labelSelector: LabelSelector };
      }[];
    };
  };
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
    selector?: LabelSelector | Record<string, string>;
    strategy?: { rollingUpdate?: { maxUnavailable?: number; maxSurge?: number } };
    template?: { metadata: { labels: Record<string, string> }; spec: PodSpec };
    ports?: { name: string; port: number; targetPort: string | number; protocol?: 'TCP' | 'UDP' | 'SCTP' }[];
    endpoints?: { port: string; path: string }[];
    jobLabel?: string;
  };
}

function load(file: string): Manifest {
  return parse(readFileSync(join(DIR, file), 'utf8')) as Manifest;
}

function required<T>(value: T | undefined, what: string): T {
  assert.ok(value !== undefined, `no ${what}`);
  return value;
}

const deployment = load('deployment.yaml');
const migrateJob = load('migrate-job.yaml');
const template = required(deployment.spec.template, 'pod template in deployment.yaml');
const pod = template.spec;
const podLabels = template.metadata.labels;
const container = required(pod.containers[0], 'container in deployment.yaml');

/** The example Secret: its keys are what the manifests may reference, its values stand in for the real ones. */
const exampleSecret = parse(readFileSync(join(DIR, 'secret.example.yaml'), 'utf8')) as {
  kind: string;
  metadata: { name: string };
  stringData: Record<string, string>;
};
const secret = exampleSecret.stringData;

/** What the downward API gives a container (a pod name as a ReplicaSet names its pods). */
const FIELD_VALUES: Readonly<Record<string, string>> = {
  'metadata.name': 'walbox-7d9f8c6b5-x2x4z',
  'metadata.namespace': 'default',
  'status.podIP': '10.244.1.7',
};

/** The WALBOX_* variables the image sets (Dockerfile ENV of the runtime stage): below the pod's own env. */
const IMAGE_ENV: Readonly<Record<string, string>> = (() => {
  const dockerfile = readFileSync(join(ROOT, 'Dockerfile'), 'utf8');
  const runtime = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '));
  return Object.fromEntries(
    [...runtime.matchAll(/\b(WALBOX_[A-Z0-9_]+)=(\S+)/g)].map((m) => [m[1] ?? '', m[2] ?? '']),
  );
})();

function podOf(workload: Manifest): { spec: PodSpec; container: Container } {
  const spec = required(workload.spec.template, `pod template in ${workload.metadata.name}`).spec;
  return { spec, container: required(spec.containers[0], `container in ${workload.metadata.name}`) };
}

/** The container's environment as the kubelet builds it, secretKeyRefs filled from the example Secret. */
function containerEnv(workload: Manifest): Record<string, string> {
  const { container: c } = podOf(workload);
  const env: Record<string, string> = { ...IMAGE_ENV };
  for (const variable of c.env ?? []) {
    const ref = variable.valueFrom?.secretKeyRef;
    const field = variable.valueFrom?.fieldRef?.fieldPath;
    let value: string | undefined;
    if (variable.value !== undefined) value = variable.value;
    else if (ref !== undefined) {
      assert.equal(ref.name, 'walbox', `${variable.name} refers to a Secret other than walbox`);
      value = secret[ref.key];
      assert.ok(value !== undefined, `${variable.name}: the Secret has no key ${ref.key}`);
    } else if (field !== undefined) value = FIELD_VALUES[field];
    assert.ok(
      value !== undefined,
      `${workload.metadata.name}: ${variable.name} has no value this test knows`,
    );
    env[variable.name] = value;
  }
  return env;
}

/** The files the container sees on its Secret volumes: path → the example Secret's value. */
function secretFiles(workload: Manifest): Map<string, string> {
  const { spec, container: c } = podOf(workload);
  const files = new Map<string, string>();
  for (const mount of c.volumeMounts ?? []) {
    const source = spec.volumes?.find((v) => v.name === mount.name)?.secret;
    if (source === undefined) continue;
    assert.equal(source.secretName, 'walbox', `volume ${mount.name} is not the Secret walbox`);
    for (const item of source.items ?? Object.keys(secret).map((key) => ({ key, path: key }))) {
      const value = secret[item.key];
      assert.ok(value !== undefined, `volume ${mount.name}: the Secret has no key ${item.key}`);
      files.set(`${mount.mountPath}/${item.path}`, value);
    }
  }
  return files;
}

/** What walbox's own configuration loader makes of the container: names, values, files and combinations. */
function containerConfig(
  workload: Manifest,
  requiredKeys: readonly (keyof RelayConfig)[],
  extraEnv: Record<string, string> = {},
): RelayConfig {
  const files = secretFiles(workload);
  return loadConfig({
    env: { ...extraEnv, ...containerEnv(workload) },
    required: requiredKeys,
    readFile: (path) => required(files.get(path), `${path} on a Secret volume`),
    checkFile: (path) => (files.has(path) ? undefined : 'not on a mounted Secret volume'),
  });
}

/** The relays' config as `walbox run` loads it (it requires both, src/cli/commands/runRelayCommand.ts). */
function relayConfig(): RelayConfig {
  return containerConfig(deployment, ['databaseUrl', 'kafkaBrokers']);
}

function matches(selector: Record<string, string>, labels: Record<string, string>): boolean {
  return Object.keys(selector).length > 0 && Object.entries(selector).every(([k, v]) => labels[k] === v);
}

describe('deploy/kubernetes', () => {
  it("the relays' and the migration's environment loads with walbox's configuration loader", () => {
    assert.equal(exampleSecret.kind, 'Secret');
    assert.equal(exampleSecret.metadata.name, 'walbox');
    const config = relayConfig();
    assert.equal(config.mode, 'wal');
    assert.equal(config.metricsHost, '0.0.0.0');
    assert.equal(config.kafkaSsl, true);
    assert.equal(config.kafkaSaslMechanism, 'scram-sha-512');
    assert.equal(config.kafkaSaslUsername, secret['kafka-sasl-username']);
    assert.equal(config.kafkaSaslPassword, secret['kafka-sasl-password']?.trim());
    assert.ok(config.databaseUrl?.startsWith('postgres://'));
    assert.deepEqual(migrateJob.spec.template?.spec.containers[0]?.args, ['migrate']);
    const migrateConfig = containerConfig(migrateJob, ['databaseUrl']);
    // The Job migrates what the relays read.
    for (const key of ['databaseUrl', 'schema', 'table', 'publication'] as const) {
      assert.equal(migrateConfig[key], config[key], key);
    }
  });

  it('sets only real options, by their WALBOX_* names, and secrets only from the Secret', () => {
    const options = new Map(OPTION_SPECS.map((s) => [toEnvName(s.flag), s]));
    const fileVariants = new Map(
      OPTION_SPECS.filter((s) => s.secret === true).map((s) => [`${toEnvName(s.flag)}_FILE`, s]),
    );
    for (const workload of [deployment, migrateJob]) {
      const files = secretFiles(workload);
      for (const variable of podOf(workload).container.env ?? []) {
        const where = `${workload.metadata.name} sets ${variable.name}`;
        const spec = options.get(variable.name) ?? fileVariants.get(variable.name);
        assert.ok(spec !== undefined, `${where}, which walbox does not read`);
        if (spec.secret !== true) continue;
        if (variable.name.endsWith('_FILE')) {
          assert.ok(files.has(variable.value ?? ''), `${where} to a path on no Secret volume`);
        } else {
          assert.equal(variable.value, undefined, `${where} to a literal: take it from the Secret`);
          assert.ok(variable.valueFrom?.secretKeyRef !== undefined, `${where}: not from a secretKeyRef`);
        }
      }
    }
    // Every secret option the relays use comes from the Secret one way or the other.
    const env = new Map((container.env ?? []).map((e) => [e.name, e]));
    for (const name of ['WALBOX_DATABASE_URL', 'WALBOX_KAFKA_SASL_PASSWORD']) {
      assert.ok(
        env.has(name) || env.has(`${name}_FILE`),
        `the Deployment sets neither ${name} nor ${name}_FILE`,
      );
    }
  });

  it('a Service named walbox does not stop the relays, should its service links reach them', () => {
    const config = relayConfig();
    assert.equal(pod.enableServiceLinks, false);
    const service = load('service.yaml');
    assert.equal(service.metadata.name, 'walbox');
    const links = serviceLinks(
      service.metadata.name,
      (service.spec.ports ?? []).map((p) => ({ name: p.name, port: p.port, protocol: p.protocol ?? 'TCP' })),
    );
    assert.ok(Object.keys(links).length > 0);
    const withLinks = containerConfig(deployment, ['databaseUrl', 'kafkaBrokers'], links);
    assert.equal(withLinks.metricsPort, config.metricsPort);
  });

  it('runs two relays on different nodes, drains on SIGTERM before the kubelet kills, non-root', () => {
    const config = relayConfig();
    assert.equal(deployment.spec.replicas, 2);
    assert.equal(deployment.spec.strategy?.rollingUpdate?.maxUnavailable, 0);
    assert.equal(deployment.spec.strategy.rollingUpdate.maxSurge, 1);
    assert.deepEqual(container.args, ['run']);
    // The image's entrypoint is the CLI: `args`, not `command`, picks the subcommand.
    assert.ok(!('command' in container));
    const [spread] = pod.affinity?.podAntiAffinity?.preferredDuringSchedulingIgnoredDuringExecution ?? [];
    assert.equal(spread?.podAffinityTerm.topologyKey, 'kubernetes.io/hostname');
    assert.ok(matches(spread.podAffinityTerm.labelSelector.matchLabels, podLabels));

    // Explicit in the manifest, so that the rule below is visible where it is kept.
    assert.ok(container.env?.some((e) => e.name === 'WALBOX_SHUTDOWN_TIMEOUT'));
    const grace = pod.terminationGracePeriodSeconds ?? 30;
    assert.ok(
      grace * 1000 >= config.shutdownTimeoutMs + 5_000,
      `terminationGracePeriodSeconds ${grace} is not 5 s above --shutdown-timeout (${config.shutdownTimeoutMs} ms)`,
    );

    assert.equal(pod.automountServiceAccountToken, false);
    assert.equal(pod.securityContext?.runAsNonRoot, true);
    assert.equal(pod.securityContext.seccompProfile?.type, 'RuntimeDefault');
    // The Dockerfile's `USER node`: uid 1000 in the node images.
    assert.match(readFileSync(join(ROOT, 'Dockerfile'), 'utf8'), /^USER node$/m);
    assert.equal(pod.securityContext.runAsUser, 1000);
    for (const workload of [deployment, migrateJob]) {
      assert.deepEqual(podOf(workload).container.securityContext, {
        allowPrivilegeEscalation: false,
        readOnlyRootFilesystem: true,
        capabilities: { drop: ['ALL'] },
      });
      assert.equal(podOf(workload).spec.enableServiceLinks, false);
    }
    const { requests = {}, limits = {} } = container.resources ?? {};
    assert.ok(requests['memory'] !== undefined && limits['memory'] !== undefined, 'memory request and limit');
    assert.ok(requests['cpu'] !== undefined && limits['cpu'] === undefined, 'a CPU request and no CPU limit');
  });

  it('probes /healthz and /readyz on the port walbox serves its metrics on', () => {
    const config = relayConfig();
    const metrics = container.ports?.find((p) => p.name === 'metrics');
    assert.equal(metrics?.containerPort, config.metricsPort);
    assert.deepEqual(container.livenessProbe?.httpGet, { path: '/healthz', port: 'metrics' });
    assert.deepEqual(container.readinessProbe?.httpGet, { path: '/readyz', port: 'metrics' });
    const startup = required(container.startupProbe, 'startupProbe');
    assert.deepEqual(startup.httpGet, { path: '/healthz', port: 'metrics' });
    // /healthz answers once walbox has connected (within --startup-timeout, or it exits by itself).
    const window = (startup.periodSeconds ?? 10) * (startup.failureThreshold ?? 3) * 1000;
    assert.ok(
      window > config.startupTimeoutMs,
      `startupProbe allows ${window} ms, not more than --startup-timeout (${config.startupTimeoutMs} ms)`,
    );
  });

  it('has a PodDisruptionBudget, a Service and a ServiceMonitor that select the relays', () => {
    const config = relayConfig();
    const deploymentSelector = deployment.spec.selector as LabelSelector;
    assert.ok(matches(deploymentSelector.matchLabels, podLabels));
    // The migration Job's pods are no relays.
    assert.ok(!matches(deploymentSelector.matchLabels, migrateJob.spec.template?.metadata.labels ?? {}));

    const pdb = load('pdb.yaml');
    assert.equal(pdb.kind, 'PodDisruptionBudget');
    assert.equal(pdb.spec.maxUnavailable, 1);
    assert.ok(matches((pdb.spec.selector as LabelSelector).matchLabels, podLabels));

    const service = load('service.yaml');
    assert.ok(matches(service.spec.selector as Record<string, string>, podLabels));
    assert.deepEqual(service.spec.ports, [
      { name: 'metrics', port: config.metricsPort, targetPort: 'metrics' },
    ]);
    assert.deepEqual(service.metadata.annotations, {
      'prometheus.io/scrape': 'true',
      'prometheus.io/port': String(config.metricsPort),
      'prometheus.io/path': '/metrics',
    });

    const monitor = load('servicemonitor.yaml');
    assert.equal(monitor.kind, 'ServiceMonitor');
    assert.ok(matches((monitor.spec.selector as LabelSelector).matchLabels, service.metadata.labels ?? {}));
    assert.deepEqual(monitor.spec.endpoints, [{ port: 'metrics', path: '/metrics', interval: '15s' }]);
    assert.ok(service.spec.ports.some((p) => p.name === monitor.spec.endpoints?.[0]?.port));
    // job="walbox", as the alert rules expect: the job label is taken from this Service label.
    assert.equal(service.metadata.labels?.[monitor.spec.jobLabel ?? ''], 'walbox');
  });

  it('lists files that exist in kustomization.yaml, not the example Secret, and the image of this version', () => {
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
    for (const workload of [deployment, migrateJob]) {
      assert.equal(podOf(workload).container.image, `walbox:${version}`, workload.metadata.name);
    }
  });
});
