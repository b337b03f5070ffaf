import { accessSync, constants, statSync } from 'node:fs';

import { ConfigError } from '../errors.js';
import { OPTION_SPECS, toEnvName, type OptionSpec } from './configSchema.js';
import { parseOptionValue } from './parseOptionValue.js';
import { readEnv, type Environment, type RawSettings } from './readEnv.js';
import type { RelayConfig } from './relayConfig.js';
import { DEFAULT_HEADER_LAYOUT } from '../core/toEventHeaders.js';
import { SHAPE_COLUMNS, type OutboxShape } from '../outbox/outboxColumns.js';
import { resolveDatabaseUrl } from './resolveDatabaseUrl.js';

export interface LoadConfigInput {
  /** Values given as flags, keyed by config key; undefined means "not given". */
  readonly flags?: Partial<Record<keyof RelayConfig, string | boolean | undefined>>;
  readonly env?: Environment;
  /** Keys the command cannot work without. */
  readonly required?: readonly (keyof RelayConfig)[];
  readonly readFile?: (path: string) => string;
  /** Says why a file cannot be read, or undefined when it can (TLS files are checked before anything connects). */
  readonly checkFile?: (path: string) => string | undefined;
}

/**
 * Builds the one frozen RelayConfig: defaults < environment < flags, every value validated once. Throws a
 * ConfigError naming every bad setting (and where it came from) in one line.
 */
export function loadConfig(input: LoadConfigInput = {}): RelayConfig {
  const fromEnv: RawSettings = readEnv(input.env ?? {}, input.readFile);
  const values: Record<string, unknown> = {};
  const problems: string[] = [];
  const invalid = new Set<string>();
  for (const spec of OPTION_SPECS) {
    const flag = input.flags?.[spec.key];
    const raw = flag !== undefined ? { value: flag, source: `--${spec.flag}` } : fromEnv[spec.key];
    if (raw === undefined) {
      values[spec.key] = spec.default;
      continue;
    }
    const parsed = parseOptionValue(spec, raw.value);
    if (parsed.ok) {
      values[spec.key] = parsed.value;
    } else {
      invalid.add(spec.key);
      problems.push(describeProblem(spec, raw.value, raw.source, parsed.reason));
    }
  }
  for (const key of input.required ?? []) {
    // An invalid value was reported as such: it is not also "missing".
    if (invalid.has(key)) continue;
    if (values[key] === undefined || (Array.isArray(values[key]) && values[key].length === 0)) {
      const spec = OPTION_SPECS.find((s) => s.key === key);
      if (spec !== undefined) problems.push(describeMissing(spec));
    }
  }
  if (problems.length > 0) throw new ConfigError(problems.join('; '));
  applyShapeDefaults(values);
  const checkFile = input.checkFile ?? checkReadableFile;
  checkCombinations(values, problems);
  checkFiles(values, checkFile, problems);
  const databaseUrl = values['databaseUrl'];
  if (typeof databaseUrl === 'string') {
    const resolved = resolveDatabaseUrl(databaseUrl, input.env ?? {}, checkFile);
    if (resolved.ok) values['databaseUrl'] = resolved.url;
    else problems.push(...resolved.problems);
  }
  if (problems.length > 0) throw new ConfigError(problems.join('; '));
  // Any TLS file (or turning verification off) means TLS: a CA file on a plaintext connection would be a no-op.
  values['kafkaSsl'] =
    values['kafkaSsl'] === true ||
    values['kafkaSslInsecure'] === true ||
    ['kafkaSslCaFile', 'kafkaSslCertFile', 'kafkaSslKeyFile'].some((k) => values[k] !== undefined);
  // Every key of RelayConfig has a spec (a unit test checks it), so the object is complete here.
  return Object.freeze(values) as unknown as RelayConfig;
}

/** What --outbox-shape implies for every column, header and topic option that was not given. */
const SHAPE_DEFAULTS: Readonly<Record<OutboxShape, { topicTemplate: string; metadataHeaders: unknown }>> = {
  walbox: { topicTemplate: 'outbox.{aggregate_type}', metadataHeaders: DEFAULT_HEADER_LAYOUT.metadata },
  // Debezium's EventRouter: route.topic.replacement's default, and no header but `id`.
  debezium: { topicTemplate: 'outbox.event.${routedByValue}', metadataHeaders: [] },
};

function applyShapeDefaults(values: Record<string, unknown>): void {
  const shape = values['outboxShape'] as OutboxShape;
  const columns = SHAPE_COLUMNS[shape];
  values['idColumn'] ??= columns.id;
  values['keyColumn'] ??= columns.aggregateId;
  values['routingColumn'] ??= columns.aggregateType;
  values['eventTypeColumn'] ??= columns.eventType;
  values['payloadColumn'] ??= columns.payload;
  values['timestampColumn'] ??= columns.timestamp;
  values['topicTemplate'] ??= SHAPE_DEFAULTS[shape].topicTemplate;
  values['metadataHeaders'] ??= SHAPE_DEFAULTS[shape].metadataHeaders;
}

function describeProblem(spec: OptionSpec, value: string | boolean, source: string, reason: string): string {
  const shown = spec.secret === true ? '' : ` ${JSON.stringify(String(value))}`;
  const from = source === `--${spec.flag}` ? `--${spec.flag}` : `--${spec.flag} (from ${source})`;
  return `invalid ${from}${shown}: ${reason}`;
}

function describeMissing(spec: OptionSpec): string {
  const env = [toEnvName(spec.flag), spec.fallbackEnv].filter((n) => n !== undefined).join(' or ');
  return `missing --${spec.flag}: set the flag or ${env}`;
}

function checkFiles(
  values: Record<string, unknown>,
  checkFile: (path: string) => string | undefined,
  problems: string[],
): void {
  for (const spec of OPTION_SPECS) {
    const path = values[spec.key];
    if (spec.kind !== 'filePath' || typeof path !== 'string') continue;
    const problem = checkFile(path);
    if (problem !== undefined) problems.push(`cannot read --${spec.flag} ${path}: ${problem}`);
  }
}

/** Why a file cannot be read, in a few words; undefined when it can. */
export function checkReadableFile(path: string): string | undefined {
  try {
    if (!statSync(path).isFile()) return 'not a file';
    accessSync(path, constants.R_OK);
    return undefined;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return 'no such file';
    if (code === 'EACCES') return 'permission denied';
    return error instanceof Error ? error.message : String(error);
  }
}

function checkCombinations(values: Record<string, unknown>, problems: string[]): void {
  if ((values['kafkaSslCertFile'] === undefined) !== (values['kafkaSslKeyFile'] === undefined)) {
    problems.push('--kafka-ssl-cert-file and --kafka-ssl-key-file go together: give both or neither');
  }
  const mechanism = values['kafkaSaslMechanism'] as string | undefined;
  const username = values['kafkaSaslUsername'];
  const password = values['kafkaSaslPassword'];
  const tokenFile = values['kafkaSaslOauthbearerTokenFile'];
  if (mechanism === undefined) {
    if (username !== undefined || password !== undefined || tokenFile !== undefined) {
      problems.push(
        'SASL credentials are set but --kafka-sasl-mechanism is not: set it (plain, scram-sha-256, scram-sha-512, oauthbearer)',
      );
    }
  } else if (mechanism === 'oauthbearer') {
    if (tokenFile === undefined) {
      problems.push('--kafka-sasl-mechanism oauthbearer needs --kafka-sasl-oauthbearer-token-file');
    }
    if (username !== undefined || password !== undefined) {
      problems.push('--kafka-sasl-mechanism oauthbearer takes a token file, not a username or password');
    }
  } else {
    if (username === undefined || password === undefined) {
      problems.push(
        `--kafka-sasl-mechanism ${mechanism} needs --kafka-sasl-username and WALBOX_KAFKA_SASL_PASSWORD ` +
          '(or WALBOX_KAFKA_SASL_PASSWORD_FILE)',
      );
    }
    if (tokenFile !== undefined) {
      problems.push(`--kafka-sasl-oauthbearer-token-file applies only to --kafka-sasl-mechanism oauthbearer`);
    }
  }
  const initial = values['retryBackoffInitialMs'];
  const max = values['retryBackoffMaxMs'];
  if (typeof initial === 'number' && typeof max === 'number' && initial > max) {
    problems.push('--retry-backoff-initial must not exceed --retry-backoff-max');
  }
}
