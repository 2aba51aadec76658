import { describe, expect, it } from 'vitest';
import { parseSse, type SseMessage } from './sse-parser.js';

function streamOf(chunks: readonly string[]): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  return new ReadableStream({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(encoder.encode(chunk));
      controller.close();
    },
  });
}

async function parse(chunks: readonly string[]): Promise<SseMessage[]> {
  const messages: SseMessage[] = [];
  for await (const message of parseSse(streamOf(chunks))) messages.push(message);
  return messages;
}

describe('parseSse', () => {
  it('dispatches messages at blank lines, whatever the chunking and line endings', async () => {
    const text =
      'id: 1\nevent: RunStarted\ndata: {"a":1}\n\n: heartbeat\n\nid:2\r\nevent:ToolCallStarted\r\ndata: line one\r\ndata: line two\r\n\r\nevent: ModelDelta\rdata: {"text":"hé"}\r\r';
    const expected: SseMessage[] = [
      { id: '1', event: 'RunStarted', data: '{"a":1}', retry: undefined },
      { id: '2', event: 'ToolCallStarted', data: 'line one\nline two', retry: undefined },
      { id: undefined, event: 'ModelDelta', data: '{"text":"hé"}', retry: undefined },
    ];
    expect(await parse([text])).toEqual(expected);
    const bytes = [...text];
    expect(await parse(bytes)).toEqual(expected);
  });

  it('reads retry, defaults the event name, and drops a message the stream cut off', async () => {
    expect(await parse(['retry: 1500\ndata: x\n\n', 'id: 3\ndata: cut'])).toEqual([
      { id: undefined, event: 'message', data: 'x', retry: 1500 },
    ]);
  });
});
