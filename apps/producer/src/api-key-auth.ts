import { createHash, timingSafeEqual } from 'node:crypto';
import type { MiddlewareHandler } from 'hono';
import { ForbiddenError, UnauthorizedError } from './errors.js';

/** Paths that never need a key. */
export const OPEN_PATHS: readonly string[] = ['/healthz'];

/** Methods a read-only key may use. */
export const READ_METHODS: readonly string[] = ['GET', 'HEAD'];

const BEARER = /^Bearer\s+(.+)$/i;

/**
 * Requires `Authorization: Bearer <key>` for one of `apiKeys` (every right)
 * or `readApiKeys` (GET and HEAD only: anything else is 403) on every path
 * but {@link OPEN_PATHS}; keys are compared as SHA-256 digests in constant
 * time, against every known key. With no keys at all, every request passes.
 */
export function apiKeyAuth(apiKeys: readonly string[], readApiKeys: readonly string[] = []): MiddlewareHandler {
  const full = apiKeys.map(digest);
  const readOnly = readApiKeys.map(digest);
  return async (c, next) => {
    if (full.length + readOnly.length === 0 || OPEN_PATHS.includes(c.req.path)) return next();
    const match = BEARER.exec(c.req.header('Authorization') ?? '');
    if (!match?.[1]) throw new UnauthorizedError('missing bearer API key');
    const presented = digest(match[1].trim());
    const isFull = matchesAny(full, presented);
    const isReadOnly = matchesAny(readOnly, presented);
    if (!isFull && !isReadOnly) throw new UnauthorizedError('invalid API key');
    if (!isFull && !READ_METHODS.includes(c.req.method)) {
      throw new ForbiddenError(`this API key may only read (${READ_METHODS.join(', ')})`);
    }
    return next();
  };
}

/** Compares against every digest, without stopping at a match. */
function matchesAny(digests: readonly Buffer[], presented: Buffer): boolean {
  let found = false;
  for (const known of digests) found = timingSafeEqual(known, presented) || found;
  return found;
}

function digest(key: string): Buffer {
  return createHash('sha256').update(key).digest();
}
