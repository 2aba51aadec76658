import type { Context } from 'hono';
import { InvalidBodyError, ProducerError } from './errors.js';

/** A parsed form post: each field's value (a string, or a file for a multipart upload). */
export type FormFields = Awaited<ReturnType<Context['req']['parseBody']>>;

/**
 * Parses the request body as a form (`application/x-www-form-urlencoded` or
 * `multipart/form-data`); the parsed form stays readable by later handlers.
 * A body that does not parse as its declared type is `InvalidBodyError` (400),
 * never a 500; a refusal raised while reading it (the body limit's 413) passes
 * through as it is.
 */
export async function formBody(c: Context): Promise<FormFields> {
  try {
    return await c.req.parseBody();
  } catch (error) {
    if (error instanceof ProducerError) throw error;
    const type = (c.req.header('Content-Type') ?? '').slice(0, 100);
    throw new InvalidBodyError('', `request body does not parse as its Content-Type "${type}"`);
  }
}
