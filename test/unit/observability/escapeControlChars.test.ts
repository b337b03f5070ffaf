import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import {
  escapeControlChars,
  escapeControlCharsInJson,
} from '../../../src/observability/escapeControlChars.js';

// eslint-disable-next-line no-control-regex -- the set under test
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;

/** Every code point the function must escape. */
function unsafeCodePoints(): number[] {
  const ranges: [number, number][] = [
    [0x00, 0x1f],
    [0x7f, 0x9f],
    [0x2028, 0x2029],
    [0x202a, 0x202e],
    [0x2066, 0x2069],
  ];
  return ranges.flatMap(([from, to]) => Array.from({ length: to - from + 1 }, (_, i) => from + i));
}

describe('escapeControlChars', () => {
  it('escapes C0 controls, tab and newline included, as \\xNN', () => {
    assert.equal(escapeControlChars('\u001b[31mred\u001b[0m'), '\\x1b[31mred\\x1b[0m');
    assert.equal(escapeControlChars('a\tb\nc\r\u0000\u0007'), 'a\\x09b\\x0ac\\x0d\\x00\\x07');
  });

  it('escapes DEL and the C1 controls as \\xNN', () => {
    assert.equal(escapeControlChars('\u007f\u0080\u0085\u009b2J\u009f'), '\\x7f\\x80\\x85\\x9b2J\\x9f');
  });

  it('escapes line and paragraph separators and the bidi overrides and isolates as \\uNNNN', () => {
    assert.equal(escapeControlChars('a\u2028b\u2029c'), 'a\\u2028b\\u2029c');
    assert.equal(
      escapeControlChars('\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069'),
      '\\u202a\\u202b\\u202c\\u202d\\u202e\\u2066\\u2067\\u2068\\u2069',
    );
  });

  it('escapes every character of the set, and only those', () => {
    for (const code of unsafeCodePoints()) {
      const escaped = escapeControlChars(String.fromCharCode(code));
      assert.match(escaped, /^\\(x[0-9a-f]{2}|u[0-9a-f]{4})$/, `U+${code.toString(16)}`);
      assert.equal(Number.parseInt(escaped.slice(2), 16), code);
    }
    for (let code = 0; code < 0x3000; code++) {
      const char = String.fromCharCode(code);
      if (code >= 0xd800 && code <= 0xdfff) continue; // lone surrogates are not text
      if (!UNSAFE.test(char)) assert.equal(escapeControlChars(char), char, `U+${code.toString(16)}`);
    }
  });

  it('leaves ordinary text alone: spaces, quotes, backslashes, accents, CJK, emoji', () => {
    const text = 'order "o-1" \\ C:\\tmp café 注文 \u00a0 🚚 \u200d';
    assert.equal(escapeControlChars(text), text);
    assert.equal(escapeControlChars(''), '');
  });
});

describe('escapeControlCharsInJson', () => {
  it('keeps JSON valid and equal in value, with nothing unsafe left but its own newlines', () => {
    const value = { id: 'x\u001b[2J', t: 'a\u009b31m\u007f', s: 'b\u2028\u202e\u2069', n: 'line\nnext' };
    const json = escapeControlCharsInJson(JSON.stringify(value, null, 2));
    assert.deepEqual(JSON.parse(json), value);
    assert.doesNotMatch(json.replaceAll('\n', ''), UNSAFE);
    assert.match(json, /\\u009b31m\\u007f/);
  });
});
