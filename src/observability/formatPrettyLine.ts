import { escapeControlChars } from './escapeControlChars.js';

const HIDDEN = new Set(['level', 'time', 'msg', 'service', 'pid', 'hostname']);

/**
 * One pino JSON line as people read it: `15:04:05.123 WARN  message key=value …`. Fields stay the same as in
 * JSON (already redacted by pino); an error shows its message instead of its stack. Row content and error texts
 * reach these lines, so control characters are escaped (escapeControlChars): the line cannot move the cursor,
 * recolour the terminal or fake a second line.
 */
export function formatPrettyLine(line: string): string {
  let entry: Record<string, unknown>;
  try {
    entry = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return `${escapeControlChars(line.endsWith('\n') ? line.slice(0, -1) : line)}\n`;
  }
  const time = typeof entry['time'] === 'string' ? entry['time'].slice(11, 23) : '';
  const level = (typeof entry['level'] === 'string' ? entry['level'] : 'info').toUpperCase().padEnd(5);
  const message = typeof entry['msg'] === 'string' ? entry['msg'] : '';
  const fields = Object.entries(entry)
    .filter(([key]) => !HIDDEN.has(key))
    .map(([key, value]) => `${key}=${formatValue(value)}`);
  return `${escapeControlChars([time, level, message, ...fields].filter((part) => part !== '').join(' '))}\n`;
}

function formatValue(value: unknown): string {
  if (typeof value === 'string') return /[\s"=]/.test(value) ? JSON.stringify(value) : value;
  if (typeof value === 'object' && value !== null && 'message' in value) {
    const message = value.message;
    return JSON.stringify(typeof message === 'string' ? message : String(message));
  }
  return JSON.stringify(value);
}
