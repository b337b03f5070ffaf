import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { OPTION_SPECS, toEnvName } from '../../../src/config/configSchema.js';
import { loadConfig } from '../../../src/config/loadConfig.js';
import { readEnv } from '../../../src/config/readEnv.js';
import { ConfigError } from '../../../src/errors.js';
import { serviceLinks } from '../../support/serviceLinks.js';

/** A Service named walbox: the metrics port, and a UDP and an SCTP port so that every shape of name occurs. */
const WALBOX_SERVICE = serviceLinks('walbox', [
  { name: 'metrics', port: 9464, protocol: 'TCP' },
  { name: 'dns-udp', port: 53, protocol: 'UDP' },
  { name: 'assoc', port: 7777, protocol: 'SCTP' },
]);

describe('readEnv: Kubernetes service-link variables', () => {
  it('ignores every variable of a Service named walbox, and the settings still load', () => {
    assert.ok(Object.keys(WALBOX_SERVICE).length >= 14);
    assert.equal(WALBOX_SERVICE['WALBOX_PORT'], 'tcp://10.96.12.34:9464');
    assert.equal(WALBOX_SERVICE['WALBOX_SERVICE_PORT_DNS_UDP'], '53');
    const config = loadConfig({
      env: { ...WALBOX_SERVICE, WALBOX_BATCH_SIZE: '50', WALBOX_METRICS_PORT: '9100' },
    });
    assert.equal(config.batchSize, 50);
    assert.equal(config.metricsPort, 9100);
    assert.equal(loadConfig({ env: WALBOX_SERVICE }).metricsPort, 9464);
  });

  it('ignores the variables of Services named walbox-<x>, including an unnamed single port', () => {
    const env = {
      ...serviceLinks('walbox-admin', [{ port: 8080, protocol: 'TCP' }]),
      ...serviceLinks('walbox-metrics-v2', [{ name: 'http-metrics', port: 9464, protocol: 'TCP' }]),
      // A Service walbox-metrics next to a pod that sets WALBOX_METRICS_PORT itself: the container's env wins.
      ...serviceLinks('walbox-metrics', [{ name: 'metrics', port: 9464, protocol: 'TCP' }]),
      WALBOX_METRICS_PORT: '9464',
    };
    assert.deepEqual(readEnv(env), { metricsPort: { value: '9464', source: 'WALBOX_METRICS_PORT' } });
  });

  it('still rejects a typo of an option, even one shaped like a port variable', () => {
    for (const typo of [
      { WALBOX_BATCH_SIZ: '50' },
      { WALBOX_METRIC_PORT: '9464' },
      { WALBOX_PORT: '9464' },
      { WALBOX_METRICS_PORT_9464: 'tcp://10.0.0.5:9464' },
    ]) {
      const [name] = Object.keys(typo);
      assert.throws(
        () => loadConfig({ env: { ...WALBOX_SERVICE, ...typo } }),
        (error: unknown) => {
          assert.ok(error instanceof ConfigError);
          // Only the typo is named: the service links around it are not.
          assert.equal(
            error.message,
            `unknown environment variable ${String(name)} (see walbox --help for the options)`,
          );
          return true;
        },
      );
    }
  });

  it('fails in one line when a Service walbox-metrics takes the place of WALBOX_METRICS_PORT', () => {
    const env = serviceLinks('walbox-metrics', [{ name: 'metrics', port: 9464, protocol: 'TCP' }]);
    assert.equal(env['WALBOX_METRICS_PORT'], 'tcp://10.96.12.34:9464');
    assert.throws(
      () => loadConfig({ env }),
      (error: unknown) => {
        assert.ok(error instanceof ConfigError);
        assert.doesNotMatch(error.message, /\n/);
        assert.match(
          error.message,
          /^WALBOX_METRICS_PORT=tcp:\/\/10\.96\.12\.34:9464 looks like a Kubernetes service-link variable of a Service named walbox-metrics, not --metrics-port: rename the Service, set enableServiceLinks: false in the pod spec, or set WALBOX_METRICS_PORT in the container's env$/,
        );
        return true;
      },
    );
  });

  it('never mistakes an option variable for a service link', () => {
    for (const spec of OPTION_SPECS) {
      const name = toEnvName(spec.flag);
      assert.doesNotThrow(() => readEnv({ [name]: '1' }), `${name} would be taken for a service link`);
    }
  });
});
