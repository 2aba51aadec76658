/** Unicode's control characters (Cc: C0, DEL, C1): what a terminal may act on (retitle, erase, move) instead of showing. */
const CONTROL = /\p{Cc}/gu;
const SHORT: Readonly<Record<string, string>> = { '\t': '\\t', '\n': '\\n', '\r': '\\r' };

/**
 * Text from a run (a file's or the store's) made safe to print on one
 * terminal line: each control character shown as its escape (`\r`, `\n`,
 * `\u001b`, `\u009b`), so a name holding `ESC ] 0;…` or `CR` can neither
 * retitle the terminal nor overwrite a line.
 */
export function printable(text: string): string {
  return text.replace(
    CONTROL,
    (char) => SHORT[char] ?? `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

/**
 * A run file's JSON text, safe to print: `JSON.stringify` escapes C0
 * controls but leaves DEL and C1 raw, which are escaped here too (the same
 * value once parsed).
 */
export function printableJson(value: unknown): string {
  return JSON.stringify(value, null, 2).split('\n').map(printable).join('\n');
}
