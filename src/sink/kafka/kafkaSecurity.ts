import { readFileSync } from 'node:fs';
import type { ConnectionOptions } from 'node:tls';

import type { SASLOptions } from 'kafkajs';

import type { KafkaSaslMechanism, RelayConfig } from '../../config/relayConfig.js';
import { ConfigError } from '../../errors.js';

/** The TLS and SASL part of the configuration. */
export type KafkaSecurityConfig = Pick<
  RelayConfig,
  | 'kafkaSsl'
  | 'kafkaSslCaFile'
  | 'kafkaSslCertFile'
  | 'kafkaSslKeyFile'
  | 'kafkaSslInsecure'
  | 'kafkaSaslMechanism'
  | 'kafkaSaslUsername'
  | 'kafkaSaslPassword'
  | 'kafkaSaslOauthbearerTokenFile'
>;

export interface KafkaSecurity {
  readonly ssl: ConnectionOptions | undefined;
  readonly sasl: SASLOptions | undefined;
}

/**
 * kafkajs's `ssl` and `sasl` options. Certificate files are read now (an unreadable one is a configuration error
 * naming its flag); the OAUTHBEARER token file is read at every authentication, so a rotated token (Kubernetes
 * projected tokens) is used from the next re-authentication on.
 */
export function toKafkaSecurity(config: KafkaSecurityConfig): KafkaSecurity {
  return { ssl: toSsl(config), sasl: toSasl(config) };
}

/** One line on what protects the Kafka connections, for doctor and the startup log; no secret in it. */
export function describeKafkaSecurity(config: KafkaSecurityConfig): string {
  const tls = !config.kafkaSsl
    ? 'no TLS'
    : config.kafkaSslInsecure
      ? 'TLS WITHOUT certificate verification (--kafka-ssl-insecure)'
      : `TLS verified against ${config.kafkaSslCaFile ?? 'the system CAs'}, host name checked` +
        (config.kafkaSslCertFile === undefined ? '' : `, client certificate ${config.kafkaSslCertFile}`);
  const sasl =
    config.kafkaSaslMechanism === undefined
      ? 'no SASL'
      : config.kafkaSaslMechanism === 'oauthbearer'
        ? `SASL OAUTHBEARER, token from ${config.kafkaSaslOauthbearerTokenFile ?? '?'}`
        : `SASL ${saslName(config.kafkaSaslMechanism)} as ${config.kafkaSaslUsername ?? '?'}`;
  return `${tls}; ${sasl}`;
}

export function saslName(mechanism: KafkaSaslMechanism): string {
  return mechanism.toUpperCase();
}

function toSsl(config: KafkaSecurityConfig): ConnectionOptions | undefined {
  if (!config.kafkaSsl) return undefined;
  const options: ConnectionOptions = { rejectUnauthorized: !config.kafkaSslInsecure };
  if (config.kafkaSslCaFile !== undefined) options.ca = readPem('--kafka-ssl-ca-file', config.kafkaSslCaFile);
  if (config.kafkaSslCertFile !== undefined)
    options.cert = readPem('--kafka-ssl-cert-file', config.kafkaSslCertFile);
  if (config.kafkaSslKeyFile !== undefined)
    options.key = readPem('--kafka-ssl-key-file', config.kafkaSslKeyFile);
  if (config.kafkaSslInsecure) options.checkServerIdentity = () => undefined;
  return options;
}

function toSasl(config: KafkaSecurityConfig): SASLOptions | undefined {
  const mechanism = config.kafkaSaslMechanism;
  if (mechanism === undefined) return undefined;
  if (mechanism === 'oauthbearer') {
    const tokenFile = config.kafkaSaslOauthbearerTokenFile;
    if (tokenFile === undefined)
      throw new ConfigError('--kafka-sasl-mechanism oauthbearer needs --kafka-sasl-oauthbearer-token-file');
    return {
      mechanism,
      oauthBearerProvider: () => Promise.resolve({ value: readToken(tokenFile) }),
    };
  }
  const username = config.kafkaSaslUsername;
  const password = config.kafkaSaslPassword;
  if (username === undefined || password === undefined) {
    throw new ConfigError(`--kafka-sasl-mechanism ${mechanism} needs a username and a password`);
  }
  return { mechanism, username, password };
}

function readToken(path: string): string {
  const token = readPem('--kafka-sasl-oauthbearer-token-file', path).trim();
  if (token === '') throw new ConfigError(`--kafka-sasl-oauthbearer-token-file ${path} is empty`);
  return token;
}

function readPem(flag: string, path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (cause) {
    throw new ConfigError(
      `cannot read ${flag} ${path}: ${cause instanceof Error ? cause.message : String(cause)}`,
      {
        cause,
      },
    );
  }
}
