/**
 * What a terminal may act on instead of showing: C0 controls (tab and newline included: inside one field they
 * would fake a new line or column), DEL, the C1 controls (U+0080–U+009F, e.g. U+009B is an 8-bit CSI), the
 * Unicode line and paragraph separators, and the bidi embeddings, overrides and isolates (U+202A–U+202E,
 * U+2066–U+2069; "Trojan Source") that reorder what follows them.
 */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/** The same set, less the newline: JSON.stringify's own layout (it escapes every C0 inside strings itself). */
const UNSAFE_IN_JSON = /[\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

function hex(char: string, digits: number): string {
  return char.charCodeAt(0).toString(16).padStart(digits, '0');
}

/**
 * Text from outside (row content, broker and database error texts) made safe to print on a terminal: every
 * character above becomes visible as `\xNN` (up to U+00FF) or `\uNNNN`; everything else, backslashes included,
 * stays as it is. For display only: the result is not meant to be parsed back.
 */
export function escapeControlChars(text: string): string {
  return text.replace(UNSAFE, (char) => {
    const code = char.charCodeAt(0);
    return code <= 0xff ? `\\x${hex(char, 2)}` : `\\u${hex(char, 4)}`;
  });
}

/**
 * The same for JSON text (JSON.stringify output, indented or not): the characters JSON.stringify leaves raw
 * become `\uNNNN` escapes, so the JSON stays valid and parses to the same value.
 */
export function escapeControlCharsInJson(json: string): string {
  return json.replace(UNSAFE_IN_JSON, (char) => `\\u${hex(char, 4)}`);
}
