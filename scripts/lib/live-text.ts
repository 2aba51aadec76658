import { createClient, type RunStreamEvent } from '@cairn/client';
import { DemoConsole } from './demo-console.js';

/**
 * Prints a run's model text as it streams (SSE `?include=deltas`), one block
 * per message (a team's members' too, named by their path), until the run's
 * stream ends; an abandoned attempt's partial text is announced as dropped.
 */
export async function printLiveText(
  baseUrl: string,
  runId: string,
  out: DemoConsole = new DemoConsole(),
): Promise<void> {
  for await (const event of createClient({ baseUrl }).runs.events(runId, { include: ['deltas'] })) {
    if (event.type === 'AttemptAbandoned') {
      out.endStream();
      out.line(
        `[live] ${whose(event.member)}attempt ${String(event.data.epoch)} was abandoned: its streamed text is dropped`,
      );
    }
    if (event.type !== 'ModelDelta') continue;
    out.stream(
      `[live text, ${whose(event.member)}message ${String(event.data.message_index)}, attempt ${String(event.data.epoch)}]`,
      String(event.data.text),
    );
  }
  out.endStream();
}

function whose(member: RunStreamEvent['member']): string {
  return member ? `${member.path.join('/')} ` : '';
}
