const UNIT_MS: Readonly<Record<string, number>> = {
  ms: 1,
  s: 1_000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
};

/**
 * Parses "500ms", "1s", "2.5s", "5m", "1h", "7d" into milliseconds. A bare number is milliseconds, as in
 * Kafka Connect's *.ms settings. Returns undefined when the text is not a duration.
 */
export function parseDuration(text: string): number | undefined {
  const match = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?\s*$/.exec(text);
  if (match === null) return undefined;
  const amount = Number(match[1]);
  const unit = UNIT_MS[match[2] ?? 'ms'];
  if (unit === undefined || !Number.isFinite(amount)) return undefined;
  return Math.round(amount * unit);
}

/** Formats milliseconds the way the help text and docs show defaults ("1s", "5m", "250ms"). */
export function formatDuration(ms: number): string {
  for (const [unit, size] of [
    ['d', 86_400_000],
    ['h', 3_600_000],
    ['m', 60_000],
    ['s', 1_000],
  ] as const) {
    if (ms >= size && ms % size === 0) return `${ms / size}${unit}`;
  }
  return `${ms}ms`;
}
