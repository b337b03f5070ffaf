import { ConfigError } from '../../errors.js';

/** Node's TLS verification failures, by code and by the message kafkajs keeps when it rewraps them. */
const UNTRUSTED = [
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
];
const UNTRUSTED_TEXT =
  /self[- ]signed certificate|unable to verify the first certificate|unable to get local issuer certificate|certificate has expired|certificate is not yet valid/i;
const WRONG_HOST_TEXT = /does not match certificate's altnames|ERR_TLS_CERT_ALTNAME_INVALID/i;
const NOT_TLS_TEXT = /wrong version number|packet length too long|ERR_SSL_WRONG_VERSION_NUMBER/i;
const MECHANISM_TEXT =
  /SASL \S+ mechanism is not supported by the server|does not support the requested SASL mechanism|UNSUPPORTED_SASL_MECHANISM/;
const SASL_FAILED_TEXT = /SASL .{0,40}authentication failed|SASL_AUTHENTICATION_FAILED|invalid credentials/i;

/**
 * A startup failure that retrying cannot fix (refused login, disabled mechanism, untrusted certificate, wrong
 * host name, TLS to a plaintext port) as a ConfigError with the fix, or undefined for an outage worth waiting
 * for. kafkajs rewraps errors (keeping the message, dropping code and cause), so both are looked at.
 */
export function describeStartupRefusal(
  error: unknown,
  brokers: readonly string[],
  security = '',
): ConfigError | undefined {
  const { codes, text } = collect(error);
  const where = `Kafka at ${brokers.join(',')}`;
  const settings = security === '' ? '' : ` [${security}]`;
  if (MECHANISM_TEXT.test(text)) {
    return new ConfigError(
      `${where} does not enable this SASL mechanism on this listener${settings}: set --kafka-sasl-mechanism ` +
        "to one the broker's sasl.enabled.mechanisms lists",
      { cause: error },
    );
  }
  if (SASL_FAILED_TEXT.test(text)) {
    return new ConfigError(
      `${where} refused the SASL login${settings}: check --kafka-sasl-username and WALBOX_KAFKA_SASL_PASSWORD ` +
        '(or _FILE), and that the user exists for this mechanism',
      { cause: error },
    );
  }
  if (codes.includes('ERR_TLS_CERT_ALTNAME_INVALID') || WRONG_HOST_TEXT.test(text)) {
    return new ConfigError(
      `${where}: the broker's certificate does not name the host connected to${settings}: use a host name the ` +
        "certificate lists, in --kafka-brokers and in the broker's advertised.listeners",
      { cause: error },
    );
  }
  if (codes.some((c) => UNTRUSTED.includes(c)) || UNTRUSTED_TEXT.test(text)) {
    return new ConfigError(
      `${where}: the broker's certificate is not trusted (${firstLine(text)})${settings}: set --kafka-ssl-ca-file ` +
        'to the CA that signed it',
      { cause: error },
    );
  }
  if (codes.includes('ERR_SSL_WRONG_VERSION_NUMBER') || NOT_TLS_TEXT.test(text)) {
    return new ConfigError(
      `${where} does not speak TLS on this port${settings}: drop --kafka-ssl or point --kafka-brokers at the TLS listener`,
      { cause: error },
    );
  }
  return undefined;
}

/** Codes and messages along the cause chain (cause, originalError, errors[]), bounded. */
function collect(error: unknown): { codes: string[]; text: string } {
  const codes: string[] = [];
  const texts: string[] = [];
  const queue: unknown[] = [error];
  for (let seen = 0; queue.length > 0 && seen < 20; seen++) {
    const current = queue.shift();
    if (!(current instanceof Error)) continue;
    texts.push(current.message);
    const fields = current as Error & {
      code?: unknown;
      type?: unknown;
      originalError?: unknown;
      errors?: unknown;
    };
    if (typeof fields.code === 'string') codes.push(fields.code);
    if (typeof fields.type === 'string') texts.push(fields.type);
    queue.push(fields.cause, fields.originalError);
    if (Array.isArray(fields.errors)) queue.push(...(fields.errors as unknown[]));
  }
  return { codes, text: texts.join('\n') };
}

function firstLine(text: string): string {
  return (text.split('\n')[0] ?? '').replace(/^Connection error: /, '');
}
