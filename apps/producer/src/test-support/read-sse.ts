/** One SSE message as a client receives it. */
export interface SseMessage {
  id?: string;
  event?: string;
  data: string;
}

/**
 * Reads SSE messages from `response` until the stream ends, or `stopAfter`
 * messages arrived, or `stopAt` is true of one (then aborts via `abort`);
 * counts comments in `comments`.
 */
export async function readSse(
  response: Response,
  options: {
    stopAfter?: number;
    stopAt?: (message: SseMessage) => boolean;
    abort?: () => void;
    comments?: string[];
  } = {},
): Promise<SseMessage[]> {
  const messages: SseMessage[] = [];
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return messages;
    buffer += value;
    let end: number;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const message: SseMessage = { data: '' };
      let isMessage = false;
      for (const line of block.split('\n')) {
        if (line.startsWith(':')) options.comments?.push(line);
        else if (line.startsWith('id: ')) message.id = line.slice(4);
        else if (line.startsWith('event: ')) message.event = line.slice(7);
        else if (line.startsWith('data: ')) {
          message.data += line.slice(6);
          isMessage = true;
        }
      }
      if (!isMessage) continue;
      messages.push(message);
      if (
        (options.stopAfter !== undefined && messages.length >= options.stopAfter) ||
        options.stopAt?.(message)
      ) {
        options.abort?.();
        await reader.cancel().catch(() => undefined);
        return messages;
      }
    }
  }
}
