import type { Context } from 'hono';
import type { z } from 'zod';
import { InvalidJsonError } from './errors.js';

/** Parses the request body as JSON (an empty body counts as `{}`) and validates it; throws `InvalidJsonError` or `ZodError`. */
export async function jsonBody<S extends z.ZodType>(c: Context, schema: S): Promise<z.infer<S>> {
  const text = await c.req.text();
  let value: unknown = {};
  if (text.trim() !== '') {
    try {
      value = JSON.parse(text);
    } catch (error) {
      throw new InvalidJsonError(`request body is not valid JSON: ${(error as Error).message}`);
    }
  }
  return schema.parse(value);
}
