/**
 * The comparison behind the Debezium parity test: the Kafka records of both systems as raw bytes, matched by their
 * `id` header, compared field by field, and the markdown table of what was measured.
 */

/** A consumed record, bytes as the broker holds them. */
export interface RawRecord {
  readonly topic: string;
  readonly partition: number;
  readonly offset: bigint;
  readonly key: Buffer | null;
  readonly value: Buffer | null;
  /** In wire order; a null value is a header sent with a null value. */
  readonly headers: readonly (readonly [string, Buffer | null])[];
  readonly timestamp: number;
}

/** One measured field of one event: its rendering on each side and whether the bytes are equal. */
export interface FieldOutcome {
  readonly field: string;
  readonly debezium: string;
  readonly walbox: string;
  readonly equal: boolean;
}

/** Debezium 3.x's context headers (extended.headers.enabled), compared as one field. */
export const CONTEXT_HEADER_PREFIX = '__debezium.context.';
export const CONTEXT_HEADERS_FIELD = `header ${CONTEXT_HEADER_PREFIX}*`;

/** Bytes as text when they are printable UTF-8, else as hex; `null` and absence are spelled out. */
export function showBytes(bytes: Buffer | null | undefined, max = 60): string {
  if (bytes === undefined) return '(absent)';
  if (bytes === null) return '(null)';
  const text = bytes.toString('utf8');
  const control = bytes.some((b) => b < 0x20 || b === 0x7f);
  const printable = Buffer.from(text, 'utf8').equals(bytes) && !control;
  const shown = printable ? JSON.stringify(text) : `0x${bytes.toString('hex')}`;
  return shown.length > max ? `${shown.slice(0, max - 1)}… (${bytes.length} bytes)` : shown;
}

function sameBytes(a: Buffer | null | undefined, b: Buffer | null | undefined): boolean {
  if (a === undefined || b === undefined || a === null || b === null) return a === b;
  return a.equals(b);
}

export function headerValue(record: RawRecord, name: string): Buffer | null | undefined {
  return record.headers.find(([n]) => n === name)?.[1];
}

/** The `id` header as text: what both systems' records are matched by. */
export function eventId(record: RawRecord): string {
  return headerValue(record, 'id')?.toString('utf8') ?? '';
}

/** Where each record stands among the records of its key on its side (offset order within the partition). */
export function positionsByKey(records: readonly RawRecord[]): Map<RawRecord, number> {
  const byKey = new Map<string, RawRecord[]>();
  for (const r of records) {
    const k = `${r.topic}\u0000${r.key?.toString('hex') ?? 'null'}`;
    const list = byKey.get(k) ?? [];
    list.push(r);
    byKey.set(k, list);
  }
  const positions = new Map<RawRecord, number>();
  for (const list of byKey.values()) {
    list.sort(
      (a, b) => a.partition - b.partition || (a.offset < b.offset ? -1 : a.offset > b.offset ? 1 : 0),
    );
    list.forEach((r, i) => positions.set(r, i));
  }
  return positions;
}

/**
 * Every field of one event on both sides: topic suffix (after each side's prefix), partition, key, value, each
 * header by name (Debezium's context headers as one field), the order of the headers both send, the record
 * timestamp, and the event's position among the events of its key.
 */
export function compareEvent(
  debezium: { record: RawRecord; prefix: string; position: number },
  walbox: { record: RawRecord; prefix: string; position: number },
): FieldOutcome[] {
  const d = debezium.record;
  const w = walbox.record;
  const outcomes: FieldOutcome[] = [];
  const add = (field: string, dShown: string, wShown: string, equal: boolean): void => {
    outcomes.push({ field, debezium: dShown, walbox: wShown, equal });
  };
  const suffix = (r: RawRecord, prefix: string): string =>
    r.topic.startsWith(prefix) ? r.topic.slice(prefix.length) : `(not under ${prefix}) ${r.topic}`;
  const dSuffix = suffix(d, debezium.prefix);
  const wSuffix = suffix(w, walbox.prefix);
  add('topic suffix', dSuffix, wSuffix, dSuffix === wSuffix);
  add('partition', String(d.partition), String(w.partition), d.partition === w.partition);
  add('key bytes', showBytes(d.key), showBytes(w.key), sameBytes(d.key, w.key));
  add('value bytes', showBytes(d.value), showBytes(w.value), sameBytes(d.value, w.value));

  const isContext = (name: string): boolean => name.startsWith(CONTEXT_HEADER_PREFIX);
  const names = [...new Set([...d.headers, ...w.headers].map(([n]) => n))].filter((n) => !isContext(n));
  for (const name of names) {
    const dv = headerValue(d, name);
    const wv = headerValue(w, name);
    add(`header ${name}`, showBytes(dv), showBytes(wv), sameBytes(dv, wv));
  }
  const context = (r: RawRecord): string =>
    r.headers
      .filter(([n]) => isContext(n))
      .map(([n, v]) => `${n.slice(CONTEXT_HEADER_PREFIX.length)}=${v?.toString('utf8') ?? '(null)'}`)
      .join(', ') || '(none)';
  add(CONTEXT_HEADERS_FIELD, context(d), context(w), context(d) === context(w));

  const shared = (r: RawRecord, other: RawRecord): string =>
    r.headers
      .map(([n]) => n)
      .filter((n) => other.headers.some(([o]) => o === n))
      .join(', ');
  add('header order (shared names)', shared(d, w), shared(w, d), shared(d, w) === shared(w, d));
  const showTime = (t: number): string => `${t} (${new Date(t).toISOString()})`;
  add('timestamp', showTime(d.timestamp), showTime(w.timestamp), d.timestamp === w.timestamp);
  add(
    'position among its key',
    String(debezium.position),
    String(walbox.position),
    debezium.position === walbox.position,
  );
  return outcomes;
}

/** One line of the measured table: a field of one scenario over all its events. */
export interface TableLine {
  readonly scenario: string;
  readonly field: string;
  readonly events: number;
  readonly equal: number;
  readonly example: { readonly debezium: string; readonly walbox: string };
  /** "equal", or the listed difference (with the setting that removes it), or UNEXPECTED. */
  readonly verdict: string;
}

function cell(text: string): string {
  return text.replaceAll('|', '\\|').replaceAll('\n', ' ');
}

/** The measured table, in markdown. */
export function markdownTable(lines: readonly TableLine[]): string {
  const out = [
    '| scenario | field | equal / events | Debezium (an event that differs, else the first) | walbox (same event) | verdict |',
    '| --- | --- | --- | --- | --- | --- |',
  ];
  for (const l of lines) {
    out.push(
      `| ${cell(l.scenario)} | ${cell(l.field)} | ${l.equal} / ${l.events} | ${cell(l.example.debezium)} | ${cell(l.example.walbox)} | ${cell(l.verdict)} |`,
    );
  }
  return out.join('\n');
}
