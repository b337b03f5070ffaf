const TRUE_WORDS = new Set(['true', '1', 'yes', 'on']);
const FALSE_WORDS = new Set(['false', '0', 'no', 'off']);

/** The one reading of a boolean, for flags (`--create-topics=yes`) and environment variables alike. */
export function parseBoolean(text: string): boolean | undefined {
  const word = text.trim().toLowerCase();
  if (TRUE_WORDS.has(word)) return true;
  if (FALSE_WORDS.has(word)) return false;
  return undefined;
}

export const BOOLEAN_WORDS = 'true or false (also yes/no, on/off, 1/0)';
