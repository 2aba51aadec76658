import type { Message, ToolCallRecord } from '@cairn/engine';
import type { NewRunEvent } from '../stored-delta-events.js';
import type { StoreWrites } from '../store-parts.js';

/** The model a stored long run's turns name. */
export const LONG_RUN_MODEL = 'scripted:researcher';

/**
 * Stores a finished agent run of `turns` turns, each one `slow_search` call
 * 30 ms apart (`call-0` ...), as a worker stores it: messages, tool-call rows
 * and the turn and call events. For the run page's waterfall at scale (its
 * browser test and the bench's pages section).
 */
export async function storeLongRun(store: StoreWrites, turns: number): Promise<string> {
  const run = await store.createRun({
    entity: { kind: 'agent', name: 'researcher' },
    input: 'a long run',
    checkpoint: 'tool-batch',
  });
  const { epoch } = await store.claimRun(run.runId, { workerId: 'test-worker', reason: 'run' });
  const start = Date.now();
  const at = (ms: number) => new Date(start + ms);
  const messages: Message[] = [{ role: 'user', content: 'a long run' }];
  const toolCalls: ToolCallRecord[] = [];
  const events: NewRunEvent[] = [];
  for (let i = 0; i < turns; i++) {
    const t = i * 30;
    const id = `call-${i}`;
    events.push(
      {
        type: 'ModelRequestStarted',
        data: { model: LONG_RUN_MODEL, messages: messages.length, epoch, at: at(t).toISOString() },
      },
      {
        type: 'ModelRequestCompleted',
        data: {
          model: LONG_RUN_MODEL,
          toolCalls: 1,
          usage: { totalTokens: 10 },
          epoch,
          at: at(t + 10).toISOString(),
        },
      },
      {
        type: 'ToolCallStarted',
        data: {
          toolCallId: id,
          name: 'slow_search',
          batch: i + 1,
          epoch,
          at: at(t + 10).toISOString(),
        },
      },
      {
        type: 'ToolCallCompleted',
        data: { toolCallId: id, name: 'slow_search', epoch, at: at(t + 30).toISOString() },
      },
    );
    messages.push(
      {
        role: 'assistant',
        content: '',
        toolCalls: [{ id, name: 'slow_search', arguments: `{"query":"q${i}"}` }],
      },
      { role: 'tool', toolCallId: id, name: 'slow_search', content: `result ${i}` },
    );
    toolCalls.push({
      toolCallId: id,
      name: 'slow_search',
      args: { query: `q${i}` },
      result: `result ${i}`,
      status: 'completed',
      batch: i + 1,
      idempotencyKey: `${run.runId}:${id}`,
      childRunId: null,
      startedAt: at(t + 10),
      endedAt: at(t + 30),
    });
  }
  await store.appendEvents(run.runId, events);
  await store.finishRun(run.runId, epoch, {
    status: 'COMPLETED',
    content: 'done',
    error: null,
    delta: { messages, toolCalls, usage: { inputTokens: 0, outputTokens: 0, totalTokens: 0 } },
  });
  return run.runId;
}
