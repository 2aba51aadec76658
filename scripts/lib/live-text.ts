import { createClient, type RunStreamEvent } from '@cairn/client';

/**
 * Prints a run's model text as it streams (SSE `?include=deltas`), one line
 * per message (a team's members' too, named by their path), until the run's
 * stream ends; an abandoned attempt's partial text is announced as dropped.
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
      out.write(`[live] ${whose(event.member)}attempt ${String(event.data.epoch)} was abandoned: its streamed text is dropped\n`);
    }
    if (event.type !== 'ModelDelta') continue;
    const key = `${event.member?.runId ?? ''}:${String(event.data.epoch)}:${String(event.data.message_index)}`;
    if (key !== current) {
      endLine();
      out.write(`[live text, ${whose(event.member)}message ${String(event.data.message_index)}] `);
      current = key;
    }
    out.write(String(event.data.text).replaceAll('\n', '\n    '));
  }
  endLine();
}

function whose(member: RunStreamEvent['member']): string {
  return member ? `${member.path.join('/')} ` : '';
}
