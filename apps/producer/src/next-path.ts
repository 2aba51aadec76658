/** A path as a URL carries it: printable ASCII, no space (anything else arrives percent-encoded). */
const URL_PATH_CHARACTERS = /^[\x21-\x7e]*$/;

/**
 * Where to go after signing in: a local path under the pages, the API reference or Bull Board,
 * else `/ui`. A path with anything a URL would have percent-encoded (control
 * characters, spaces, non-ASCII) is refused too: it cannot go in a
 * `Location` header.
 */
export function safeNextPath(raw: unknown): string {
  if (typeof raw !== 'string' || !raw.startsWith('/') || raw.startsWith('//') || raw.includes('\\'))
    return '/ui';
  if (!URL_PATH_CHARACTERS.test(raw)) return '/ui';
  return raw === '/ui' ||
    raw.startsWith('/ui/') ||
    raw.startsWith('/ui?') ||
    raw.startsWith('/admin/queues') ||
    raw.startsWith('/docs/')
    ? raw
    : '/ui';
}
