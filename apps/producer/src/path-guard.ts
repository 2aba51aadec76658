import type { MiddlewareHandler } from 'hono';
import { InvalidParameterError } from './errors.js';

/** C0 controls and DEL, NUL included. */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f]/;

/**
 * Refuses a path whose percent-decoding is not UTF-8 or yields control
 * characters (a NUL in a run id would reach Postgres, which rejects it): 400
 * before any route looks the id up.
 */
export function pathGuard(): MiddlewareHandler {
  return async (c, next) => {
    const raw = new URL(c.req.url).pathname;
    let decoded: string;
    try {
      decoded = decodeURIComponent(raw);
    } catch {
      throw new InvalidParameterError('path', 'is not valid percent-encoded UTF-8');
    }
    if (CONTROL_CHARACTERS.test(decoded))
      throw new InvalidParameterError('path', 'contains control characters');
    return next();
  };
}
