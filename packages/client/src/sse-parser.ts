/** One message of a `text/event-stream`, as the SSE specification dispatches it. */
export interface SseMessage {
  /** The `event:` field, `message` when absent. */
  event: string;
  /** The `data:` lines joined with newlines. */
  data: string;
  /** The `id:` field of this message, `undefined` when it had none. */
  id: string | undefined;
  /** The `retry:` field (reconnection delay in ms), when the message carried one. */
  retry: number | undefined;
}

/**
 * Parses an event stream's bytes into messages (WHATWG HTML "Server-sent
 * events", interpreting an event stream): comments are skipped, a message is
 * dispatched at a blank line, a message cut off by the end of the stream is dropped.
 */
export async function* parseSse(body: ReadableStream<Uint8Array>): AsyncGenerator<SseMessage> {
  const decoder = new TextDecoder();
  const reader = body.getReader();
  let buffer = '';
  let data: string[] = [];
  let event = '';
  let id: string | undefined;
  let retry: number | undefined;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      buffer += done ? decoder.decode() : decoder.decode(value, { stream: true });
      let lineEnd: number;
      while ((lineEnd = findLineEnd(buffer, done)) >= 0) {
        const line = buffer.slice(0, lineEnd);
        buffer = buffer.slice(
          lineEnd + (buffer[lineEnd] === '\r' && buffer[lineEnd + 1] === '\n' ? 2 : 1),
        );
        if (line === '') {
          if (data.length > 0 || id !== undefined) {
            yield { event: event || 'message', data: data.join('\n'), id, retry };
          }
          data = [];
          event = '';
          id = undefined;
          retry = undefined;
          continue;
        }
        if (line.startsWith(':')) continue;
        const colon = line.indexOf(':');
        const field = colon < 0 ? line : line.slice(0, colon);
        let value = colon < 0 ? '' : line.slice(colon + 1);
        if (value.startsWith(' ')) value = value.slice(1);
        if (field === 'data') data.push(value);
        else if (field === 'event') event = value;
        else if (field === 'id' && !value.includes('\0')) id = value;
        else if (field === 'retry' && /^\d+$/.test(value)) retry = Number(value);
      }
      if (done) return;
    }
  } finally {
    reader.releaseLock();
    await body.cancel().catch(() => undefined);
  }
}

/** Index of the first line terminator (`\n`, `\r\n` or a lone `\r`), -1 when the buffer holds no whole line yet. */
function findLineEnd(buffer: string, ended: boolean): number {
  for (let i = 0; i < buffer.length; i++) {
    const char = buffer[i];
    if (char === '\n') return i;
    // A `\r` at the very end may be the first half of `\r\n`: wait for more, unless the stream ended.
    if (char === '\r') return i + 1 < buffer.length || ended ? i : -1;
  }
  return -1;
}
