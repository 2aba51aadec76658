import type { Context } from 'hono';
import type { z } from 'zod';
import { InvalidJsonError, UnsupportedMediaTypeError } from './errors.js';
import { assertSafeJson } from './json-safety.js';

const JSON_MEDIA_TYPE = /^application\/([\w.+-]+\+)?json\s*(;|$)/i;
const UTF8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Parses the request body as JSON (an empty body counts as `{}`) and validates it.
 * A non-empty body must be `application/json` (415 otherwise: this also keeps
 * browsers' no-preflight form posts out) in valid UTF-8, and pass
 * {@link assertSafeJson}. Throws `UnsupportedMediaTypeError`, `InvalidJsonError`,
 * `InvalidBodyError` or `ZodError`.
 */
export async function jsonBody<S extends z.ZodType>(c: Context, schema: S): Promise<z.infer<S>> {
  const bytes = new Uint8Array(await c.req.arrayBuffer());
  let value: unknown = {};
  if (bytes.length > 0) {
    const contentType = c.req.header('Content-Type') ?? '';
    if (!JSON_MEDIA_TYPE.test(contentType)) throw new UnsupportedMediaTypeError(contentType);
    let text: string;
    try {
      text = UTF8.decode(bytes);
    } catch {
      throw new InvalidJsonError('request body is not valid UTF-8');
    }
    if (text.trim() !== '') {
      try {
        value = JSON.parse(text);
      } catch (error) {
        throw new InvalidJsonError(`request body is not valid JSON: ${(error as Error).message}`);
      }
    }
  }
  assertSafeJson(value);
  return schema.parse(value);
}
