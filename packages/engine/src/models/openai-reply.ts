import { Stream } from 'openai/core/streaming';
import { ModelError } from '../errors.js';

/** How much of a body that cannot be read an error quotes. */
const QUOTED_CHARS = 200;

/** Server-sent events as the client's stream helpers read them (`fromReadableStream`). */
export type EventStream = ReturnType<Stream<unknown>['toReadableStream']>;

/** What a model server sent back: an event stream, read as it arrives, or a whole JSON body. */
export type ModelReply = { kind: 'events'; events: EventStream } | { kind: 'json'; body: unknown };

/**
 * Reads the answer to an adapter's request by what came back rather than by
 * what was asked: `text/event-stream` is an event stream (and so is a body
 * under another content type that starts as one); any other body is read
 * whole as JSON, so a server that answers `stream: true` with a whole
 * completion (several self-hosted servers and gateways do) still works. A
 * body that is not JSON fails naming its status, content type and first
 * bytes, not retryable (the same URL sends the same body again); a body cut
 * off while being read is retryable. Non-2xx answers were already thrown by
 * the client as `APIError`s (see `toModelError`).
 */
export async function readModelReply(request: {
  asResponse(): Promise<Response>;
}): Promise<ModelReply> {
  const response = await request.asResponse();
  const contentType = response.headers.get('content-type') ?? '';
  if (/^text\/event-stream\b/i.test(contentType)) {
    return {
      kind: 'events',
      events: Stream.fromSSEResponse(response, new AbortController()).toReadableStream(),
    };
  }
  const text = await response.text().catch((cause: unknown) => {
    throw new ModelError(
      `model request failed: the ${response.status} answer's body was cut off: ${cause instanceof Error ? cause.message : String(cause)}`,
      true,
      response.status,
      { cause },
    );
  });
  if (looksLikeEventStream(text)) {
    // An event stream under another content type (some proxies relabel it): its deltas come once the whole body is in.
    const relabelled = new Response(text, {
      status: response.status,
      headers: { 'content-type': 'text/event-stream' },
    });
    return {
      kind: 'events',
      events: Stream.fromSSEResponse(relabelled, new AbortController()).toReadableStream(),
    };
  }
  try {
    return { kind: 'json', body: JSON.parse(text) as unknown };
  } catch (cause) {
    throw new ModelError(
      `malformed model response: neither JSON nor an event stream (is the base URL the API's, ending in /v1?): ${describeBody(response.status, contentType, text)}`,
      false,
      response.status,
      { cause },
    );
  }
}

/** True for a body that starts as server-sent events do (`data:`, `event:`, `id:`, `retry:` or a `:` comment line). */
function looksLikeEventStream(text: string): boolean {
  return /^(data|event|id|retry)?:/.test(text.trimStart());
}

/** `502 text/html, body: <html>...`: what came back, its first characters on one line. */
export function describeBody(status: number, contentType: string, text: string): string {
  const line = text.replace(/\s+/g, ' ').trim();
  const quoted = line.length > QUOTED_CHARS ? `${line.slice(0, QUOTED_CHARS)}...` : line;
  return `${status} ${contentType || '(no content type)'}, body: ${quoted || '(empty)'}`;
}
