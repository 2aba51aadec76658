import type { MiddlewareHandler } from 'hono';
import { PayloadTooLargeError } from './errors.js';
import { toErrorResponse } from './http-errors.js';

/** How much of a refused body is read and thrown away after its 413 before the connection closes anyway. */
const DRAIN_MAX_BYTES = 8 * 1024 * 1024;

/** How long a refused body is read and thrown away after its 413 before the connection closes anyway. */
const DRAIN_MAX_MS = 5_000;

/**
 * Bounds every request body at `maxBytes`, before anything reads it: the
 * body is read into memory up to the limit and handed on whole. A larger one
 * (by `Content-Length`, or as it streams) is answered 413 with
 * `Connection: close` at once, and the connection stays open while the rest
 * of the body is read and thrown away, at most 8 MiB for at most 5 s:
 * closing a socket the client is still writing to resets it, and a client
 * that reads its answer only after writing its body (curl) would see
 * `EPIPE` instead of the 413. Past those bounds the connection is closed
 * and such a client sees a reset (docs/operations.md "Deploying", Bodies).
 * Nothing past `maxBytes` is ever kept.
 */
export function bodyLimit(maxBytes: number): MiddlewareHandler {
  return async (c, next) => {
    const body = c.req.raw.body;
    if (!body) return next();
    const reader = body.getReader();
    const declared = Number(c.req.header('Content-Length') ?? Number.NaN);
    if (!c.req.header('Transfer-Encoding') && declared > maxBytes) return refuse(reader, maxBytes);
    let buffer = new Uint8Array(0);
    let size = 0;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (size + value.length > maxBytes) return refuse(reader, maxBytes);
      if (size + value.length > buffer.length) {
        const grown = new Uint8Array(
          Math.min(maxBytes, Math.max(size + value.length, buffer.length * 2)),
        );
        grown.set(buffer.subarray(0, size));
        buffer = grown;
      }
      buffer.set(value, size);
      size += value.length;
    }
    c.req.raw = new Request(c.req.raw, { body: buffer.subarray(0, size) });
    return next();
  };
}

/** The 413, sent whole at once; its stream ends (and the server closes the connection) once the body is drained. */
function refuse(reader: ReadableStreamDefaultReader<Uint8Array>, maxBytes: number): Response {
  const { status, body, headers } = toErrorResponse(new PayloadTooLargeError(maxBytes));
  const text = new TextEncoder().encode(JSON.stringify(body));
  const stream = new ReadableStream<Uint8Array>({
    async start(controller) {
      controller.enqueue(text);
      await drain(reader);
      controller.close();
    },
  });
  return new Response(stream, {
    status,
    headers: {
      ...headers,
      'Content-Type': 'application/json',
      'Content-Length': String(text.length),
    },
  });
}

/** Reads and discards what is left of a body, up to {@link DRAIN_MAX_BYTES} and {@link DRAIN_MAX_MS}. */
async function drain(reader: ReadableStreamDefaultReader<Uint8Array>): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<'expired'>((resolve) => {
    timer = setTimeout(() => resolve('expired'), DRAIN_MAX_MS);
  });
  try {
    for (let read = 0; read <= DRAIN_MAX_BYTES;) {
      const next = await Promise.race([reader.read(), expired]);
      if (next === 'expired' || next.done) return;
      read += next.value.length;
    }
  } catch {
    // The client went away: nothing left to drain.
  } finally {
    clearTimeout(timer);
    reader.cancel().catch(() => undefined);
  }
}
