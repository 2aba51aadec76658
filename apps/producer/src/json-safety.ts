import { InvalidBodyError } from './errors.js';

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Deepest nesting of objects and arrays a request body may have. */
export const MAX_JSON_DEPTH = 32;

/**
 * Refuses a parsed JSON body the store could not keep or the server should
 * not walk: nesting deeper than {@link MAX_JSON_DEPTH}, NUL characters
 * (Postgres text and jsonb reject them) and lone UTF-16 surrogates, in keys
 * and values alike. Iterative, so a hostile depth cannot overflow the stack.
 */
export function assertSafeJson(value: unknown): void {
  const pending: { value: unknown; path: string[] }[] = [{ value, path: [] }];
  while (pending.length > 0) {
    const { value: current, path } = pending.pop()!;
    if (typeof current === 'string') {
      checkString(current, path);
      continue;
    }
    if (current === null || typeof current !== 'object') continue;
    if (path.length >= MAX_JSON_DEPTH)
      throw new InvalidBodyError(shown(path), `nested deeper than ${MAX_JSON_DEPTH} levels`);
    for (const [key, child] of Object.entries(current)) {
      checkString(key, [...path, key]);
      pending.push({ value: child, path: [...path, key] });
    }
  }
}

function checkString(text: string, path: readonly string[]): void {
  if (text.includes('\u0000')) throw new InvalidBodyError(shown(path), 'contains a NUL character');
  if (LONE_SURROGATE.test(text))
    throw new InvalidBodyError(shown(path), 'contains a lone UTF-16 surrogate');
}

function shown(path: readonly string[]): string {
  const printable = path.map((p) => p.replaceAll('\u0000', '\\u0000'));
  return printable.length > 6
    ? `${printable.slice(0, 3).join('.')}...${printable.slice(-2).join('.')}`
    : printable.join('.');
}
