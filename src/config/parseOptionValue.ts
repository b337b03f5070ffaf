import type { OptionSpec } from './configSchema.js';
import { BOOLEAN_WORDS, parseBoolean } from './parseBoolean.js';
import { parseDuration } from './parseDuration.js';
import { explainBadTopicName } from '../core/topicName.js';
import { explainBadIdentifier, explainBadSlotName } from './validateIdentifier.js';
import { METADATA_FIELDS, type MetadataField, type MetadataHeader } from '../core/toEventHeaders.js';
import type { HeaderColumn } from '../outbox/outboxColumns.js';

export type ParsedValue = { ok: true; value: unknown } | { ok: false; reason: string };

/** Longest table name whose derived names (<table>_pending_idx, <table>_dead_letters) still fit in 63 bytes. */
const MAX_TABLE_NAME = 50;
const TEMPLATE_PLACEHOLDERS = new Set(['aggregate_type', 'event_type']);

/** Turns one raw flag or environment value into the typed value the spec asks for. */
export function parseOptionValue(spec: OptionSpec, raw: string | boolean): ParsedValue {
  if (spec.kind === 'boolean') return parseBooleanValue(raw);
  const text = String(raw);
  switch (spec.kind) {
    case 'string':
      return text.length > 0 ? ok(text) : fail('must not be empty');
    case 'identifier':
      return check(text, explainBadIdentifier(text));
    case 'tableName':
      return check(text, explainBadIdentifier(text, MAX_TABLE_NAME));
    case 'slotName':
      return check(text, explainBadSlotName(text));
    case 'topicName':
      return check(text, explainBadTopicName(text));
    case 'topicTemplate':
      return parseTopicTemplate(text);
    case 'integer':
      return parseInteger(spec, text);
    case 'duration':
      return parseDurationValue(spec, text);
    case 'choice':
      return spec.choices?.includes(text) === true
        ? ok(text)
        : fail(`must be one of ${(spec.choices ?? []).join(', ')}`);
    case 'brokerList':
      return parseBrokerList(text);
    case 'databaseUrl':
      return parseDatabaseUrl(text);
    case 'filePath':
      // Readability is checked by loadConfig (I/O stays out of parsing).
      return text.length > 0 ? ok(text) : fail('must name a file');
    case 'regex':
      return parseRegex(text);
    case 'headerColumns':
      return parseHeaderColumns(text);
    case 'metadataHeaders':
      return parseMetadataHeaders(text);
  }
}

function ok(value: unknown): ParsedValue {
  return { ok: true, value };
}

function fail(reason: string): ParsedValue {
  return { ok: false, reason };
}

function check(value: string, problem: string | undefined): ParsedValue {
  return problem === undefined ? ok(value) : fail(problem);
}

function parseBooleanValue(raw: string | boolean): ParsedValue {
  if (typeof raw === 'boolean') return ok(raw);
  const value = parseBoolean(raw);
  return value === undefined ? fail(`must be ${BOOLEAN_WORDS}`) : ok(value);
}

function parseInteger(spec: OptionSpec, text: string): ParsedValue {
  if (!/^-?\d+$/.test(text.trim())) return fail('must be an integer');
  return inRange(spec, Number(text), String);
}

function parseDurationValue(spec: OptionSpec, text: string): ParsedValue {
  if (/^\s*-/.test(text)) return fail('must not be negative (a duration such as 500ms, 10s, 5m)');
  const ms = parseDuration(text);
  if (ms === undefined) return fail('must be a duration such as 500ms, 10s, 5m, 1h or 7d');
  return inRange(spec, ms, (n) => `${n}ms`);
}

function inRange(spec: OptionSpec, n: number, show: (n: number) => string): ParsedValue {
  if (!Number.isSafeInteger(n)) return fail('is out of range');
  if (spec.min !== undefined && n < spec.min) return fail(`must be at least ${show(spec.min)}`);
  if (spec.max !== undefined && n > spec.max) return fail(`must be at most ${show(spec.max)}`);
  return ok(n);
}

function parseTopicTemplate(text: string): ParsedValue {
  // Debezium's ${routedByValue} is {aggregate_type}: the routing value.
  const template = text.replaceAll('${routedByValue}', '{aggregate_type}');
  const placeholders = [...template.matchAll(/\{([^}]*)\}/g)].map((m) => m[1] ?? '');
  const unknown = placeholders.filter((p) => !TEMPLATE_PLACEHOLDERS.has(p));
  if (unknown.length > 0) {
    return fail(
      `has unknown placeholder {${unknown.join('}, {')}}; use {aggregate_type} (or \${routedByValue}) or {event_type}`,
    );
  }
  // The fixed parts must already be legal topic characters; substituted values are checked per event.
  const fixed = template.replace(/\{[^}]*\}/g, 'x');
  const problem = explainBadTopicName(fixed);
  return problem === undefined ? ok(text) : fail(problem);
}

function parseBrokerList(text: string): ParsedValue {
  const brokers = text
    .split(',')
    .map((b) => b.trim())
    .filter((b) => b.length > 0);
  if (brokers.length === 0) return fail('must list at least one host:port');
  const bad = brokers.find((b) => !/^[^\s:/]+:\d{1,5}$/.test(b) && !/^\[[0-9a-fA-F:]+\]:\d{1,5}$/.test(b));
  return bad === undefined ? ok(brokers) : fail(`has "${bad}", which is not host:port`);
}

function parseRegex(text: string): ParsedValue {
  try {
    new RegExp(`^(?:${text})$`);
    return ok(text);
  } catch (error) {
    return fail(`is not a regular expression (${error instanceof Error ? error.message : String(error)})`);
  }
}

function parseDatabaseUrl(text: string): ParsedValue {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return fail('is not a URL; expected postgres://user@host:port/database');
  }
  if (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:') {
    return fail(`has scheme "${url.protocol}"; expected postgres:// or postgresql://`);
  }
  if (url.hostname === '' && !url.searchParams.has('host')) return fail('names no host');
  return ok(text);
}

/** `name[:header]` pairs, comma-separated; the header name defaults to the name. */
function splitPairs(text: string): { name: string; header: string }[] | string {
  const pairs: { name: string; header: string }[] = [];
  for (const item of text.split(',').map((i) => i.trim())) {
    const [name = '', header = name, extra] = item.split(':').map((p) => p.trim());
    if (name.length === 0 || header.length === 0 || extra !== undefined) {
      return `has ${JSON.stringify(item)}, which is not name or name:header-name`;
    }
    pairs.push({ name, header });
  }
  const headers = pairs.map((p) => p.header);
  const twice = headers.find((h, i) => headers.indexOf(h) !== i || h === 'id');
  if (twice !== undefined) {
    return twice === 'id'
      ? 'names the header "id", which is always the event id'
      : `names the header ${JSON.stringify(twice)} twice`;
  }
  return pairs;
}

function parseHeaderColumns(text: string): ParsedValue {
  const pairs = splitPairs(text);
  if (typeof pairs === 'string') return fail(pairs);
  const columns: HeaderColumn[] = [];
  for (const { name, header } of pairs) {
    const problem = explainBadIdentifier(name);
    if (problem !== undefined) return fail(`column ${JSON.stringify(name)}: ${problem}`);
    columns.push({ column: name, header });
  }
  return ok(columns);
}

function parseMetadataHeaders(text: string): ParsedValue {
  if (text.trim() === 'none') return ok([]);
  const pairs = splitPairs(text);
  if (typeof pairs === 'string') return fail(pairs);
  const headers: MetadataHeader[] = [];
  for (const { name, header } of pairs) {
    if (!(METADATA_FIELDS as readonly string[]).includes(name)) {
      return fail(`has unknown field ${JSON.stringify(name)}; use ${METADATA_FIELDS.join(', ')} or none`);
    }
    headers.push({ field: name as MetadataField, header });
  }
  return ok(headers);
}
