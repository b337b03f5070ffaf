/**
 * Splits the text of a JSON object into its members' keys and raw value texts, without parsing the values:
 * JSON.parse would round integers beyond 2^53. Returns undefined when the text is not an object.
 */
export function splitJsonObject(text: string): [key: string, rawValue: string][] | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const members: [string, string][] = [];
  let i = skipSpace(text, text.indexOf('{') + 1);
  while (i < text.length && text[i] !== '}') {
    const keyEnd = endOfString(text, i);
    const key = JSON.parse(text.slice(i, keyEnd)) as string;
    const valueStart = skipSpace(text, text.indexOf(':', keyEnd) + 1);
    const valueEnd = endOfValue(text, valueStart);
    members.push([key, text.slice(valueStart, valueEnd).trim()]);
    i = skipSpace(text, valueEnd);
    if (text[i] === ',') i = skipSpace(text, i + 1);
  }
  return members;
}

function skipSpace(text: string, i: number): number {
  while (i < text.length && /\s/.test(text[i] ?? '')) i++;
  return i;
}

/** `i` is at an opening quote; returns the index after the closing quote. */
function endOfString(text: string, i: number): number {
  for (let j = i + 1; j < text.length; j++) {
    if (text[j] === '\\') j++;
    else if (text[j] === '"') return j + 1;
  }
  return text.length;
}

/** Returns the index just after the value starting at `i` (string, number, literal, object or array). */
function endOfValue(text: string, i: number): number {
  if (text[i] === '"') return endOfString(text, i);
  let depth = 0;
  for (let j = i; j < text.length; j++) {
    const c = text[j];
    if (c === '"') {
      j = endOfString(text, j) - 1;
    } else if (c === '{' || c === '[') {
      depth++;
    } else if (c === '}' || c === ']') {
      if (depth === 0) return j;
      depth--;
      if (depth === 0) return j + 1;
    } else if (c === ',' && depth === 0) {
      return j;
    }
  }
  return text.length;
}
