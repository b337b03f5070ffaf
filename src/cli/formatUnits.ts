/** 1536 → "1.5 KiB": what operators read at a glance (the JSON output keeps exact bytes). */
export function formatBytes(bytes: number | null): string {
  if (bytes === null) return '—';
  if (!Number.isFinite(bytes)) return 'unlimited';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes;
  let unit = 0;
  while (Math.abs(value) >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return unit === 0 ? `${String(value)} B` : `${value.toFixed(1)} ${units[unit] ?? ''}`;
}

/** 3725 → "1h 2m 5s". */
export function formatSeconds(seconds: number): string {
  const s = Math.round(seconds);
  if (s < 60) return `${String(s)}s`;
  const parts: string[] = [];
  const days = Math.floor(s / 86_400);
  const hours = Math.floor((s % 86_400) / 3_600);
  const minutes = Math.floor((s % 3_600) / 60);
  if (days > 0) parts.push(`${String(days)}d`);
  if (hours > 0) parts.push(`${String(hours)}h`);
  if (minutes > 0) parts.push(`${String(minutes)}m`);
  if (s % 60 > 0 && days === 0) parts.push(`${String(s % 60)}s`);
  return parts.join(' ');
}

/** Aligned "label  value" lines. */
export function formatTable(rows: readonly (readonly [string, string])[]): string {
  const width = Math.max(...rows.map(([label]) => label.length));
  return rows.map(([label, value]) => `  ${label.padEnd(width)}  ${value}\n`).join('');
}
