import { createHash, timingSafeEqual } from 'node:crypto';
import type { MiddlewareHandler } from 'hono';
import { UnauthorizedError } from './errors.js';

/** Paths that never need a key. */
export const OPEN_PATHS: readonly string[] = ['/healthz'];

const BEARER = /^Bearer\s+(.+)$/i;

/**
 * Requires `Authorization: Bearer <key>` for one of `apiKeys` on every path
 * but {@link OPEN_PATHS}; keys are compared as SHA-256 digests in constant time.
 * With no keys, every request passes.
 */
export function apiKeyAuth(apiKeys: readonly string[]): MiddlewareHandler {
  const digests = apiKeys.map(digest);
  return async (c, next) => {
    if (digests.length === 0 || OPEN_PATHS.includes(c.req.path)) return next();
    const match = BEARER.exec(c.req.header('Authorization') ?? '');
    if (!match?.[1]) throw new UnauthorizedError('missing bearer API key');
    const presented = digest(match[1].trim());
    let valid = false;
    for (const known of digests) valid = timingSafeEqual(known, presented) || valid;
    if (!valid) throw new UnauthorizedError('invalid API key');
    return next();
  };
}

function digest(key: string): Buffer {
  return createHash('sha256').update(key).digest();
}
