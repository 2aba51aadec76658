import { describe, expect, it } from 'vitest';
import { printable, printableJson } from './printable.js';

// Every C0 control, DEL and every C1 control, with the text an attacker would put around them.
const CONTROLS = Array.from({ length: 0x20 }, (_, i) => String.fromCharCode(i)).join('') + '\u007f';
const C1 = Array.from({ length: 0x20 }, (_, i) => String.fromCharCode(0x80 + i)).join('');
const RAW = /\p{Cc}/u;

describe('printable', () => {
  it('shows every C0 control, DEL and C1 control as an escape, and leaves other text alone', () => {
    const text = `a${CONTROLS}b${C1}c é ✓`;
    const shown = printable(text);
    expect(shown).not.toMatch(RAW);
    expect(shown).toMatch(
      /^a\\u0000.*\\u0008\\t\\n\\u000b\\u000c\\r.*\\u001f\\u007fb\\u0080.*\\u009fc é ✓$/,
    );
    expect(printable('\u001b]0;pwned\u0007\u001b[2K\rok')).toBe(
      '\\u001b]0;pwned\\u0007\\u001b[2K\\rok',
    );
  });

  it('a run file as JSON keeps its value, with DEL and C1 escaped too', () => {
    const value = { run: { name: `x${CONTROLS}${C1}` }, list: [1, 'y'] };
    const json = printableJson(value);
    expect(json.replaceAll('\n', '')).not.toMatch(RAW);
    expect(JSON.parse(json)).toEqual(value);
    expect(json).toBe(
      JSON.stringify(value, null, 2).replace(
        /[\u007f-\u009f]/g,
        (c) => `\\u00${c.charCodeAt(0).toString(16)}`,
      ),
    );
  });
});
