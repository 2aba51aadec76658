import { createClient } from '@cairn/client';

/**
 * Prints a run's model text as it streams (SSE `?include=deltas`), one line
 * per message, until the run's stream ends; an abandoned attempt's partial
 * text is announced as dropped.
 */
export async function printLiveText(baseUrl: string, runId: string, out: NodeJS.WritableStream = process.stdout): Promise<void> {
  let current: string | undefined;
  const endLine = () => {
    if (current !== undefined) out.write('\n');
    current = undefined;
  };
  for await (const event of createClient({ baseUrl }).runs.events(runId, { include: ['deltas'] })) {
    if (event.type === 'AttemptAbandoned') {
      endLine();
      out.write(`[live] attempt ${String(event.data.epoch)} was abandoned: its streamed text is dropped\n`);
    }
    if (event.type !== 'ModelDelta') continue;
    const key = `${String(event.data.epoch)}:${String(event.data.message_index)}`;
    if (key !== current) {
      endLine();
      out.write(`[live text, message ${String(event.data.message_index)}] `);
      current = key;
    }
    out.write(String(event.data.text).replaceAll('\n', '\n    '));
  }
  endLine();
}
