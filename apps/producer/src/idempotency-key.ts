import type { Context } from 'hono';
import { InvalidParameterError } from './errors.js';

/** The header that makes `POST .../runs` idempotent. */
export const IDEMPOTENCY_KEY_HEADER = 'Idempotency-Key';

/** Longest accepted `Idempotency-Key`, in characters. */
export const MAX_IDEMPOTENCY_KEY_LENGTH = 255;

/** The request's `Idempotency-Key`, or undefined; a blank or overlong one is a 400 naming the header. */
export function idempotencyKeyOf(c: Context): string | undefined {
  const key = c.req.header(IDEMPOTENCY_KEY_HEADER);
  if (key === undefined) return undefined;
  if (key.trim() === '')
    throw new InvalidParameterError(IDEMPOTENCY_KEY_HEADER, 'must not be blank');
  if (key.length > MAX_IDEMPOTENCY_KEY_LENGTH) {
    throw new InvalidParameterError(
      IDEMPOTENCY_KEY_HEADER,
      `must be at most ${MAX_IDEMPOTENCY_KEY_LENGTH} characters`,
    );
  }
  return key;
}
