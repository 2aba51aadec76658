import type { Message, RunEvent, ToolCallRecord } from '@cairn/engine';
import type { CheckpointDelta, CheckpointStore } from '@cairn/engine/store';
import { BENCH_AGENT } from './bench-registry.js';
import { batchMessages, RUN_INPUT, type WorkloadMessage } from './workload.js';

/** A run claimed for direct commits: its id and the epoch every commit must carry. */
export interface ClaimedRun {
  runId: string;
  epoch: number;
}

/** Creates a run holding `history` (committed with it) and claims it. */
export async function createClaimedRun(
  store: CheckpointStore,
  history: readonly WorkloadMessage[] = [],
): Promise<ClaimedRun> {
  const run = await store.createRun({
    entity: { kind: 'agent', name: BENCH_AGENT },
    input: RUN_INPUT,
    checkpoint: 'tool-batch',
    messages: history as Message[],
  });
  const { epoch } = await store.claimRun(run.runId, { workerId: 'bench', reason: 'run' });
  return { runId: run.runId, epoch };
}

/** The checkpoint of one typical tool batch (numbered `batch`, which makes its call ids unique in a run). */
export function typicalDelta(batch: number): CheckpointDelta {
  const messages = batchMessages(batch) as Message[];
  const assistant = messages[0];
  const calls = assistant?.role === 'assistant' ? (assistant.toolCalls ?? []) : [];
  const now = new Date();
  const toolCalls: ToolCallRecord[] = calls.map((call, i) => {
    const result = messages[i + 1];
    return {
      toolCallId: call.id,
      name: call.name,
      args: JSON.parse(call.arguments) as unknown,
      result: result?.role === 'tool' ? result.content : null,
      status: 'completed',
      batch,
      idempotencyKey: `bench:${call.id}`,
      childRunId: null,
      startedAt: now,
      endedAt: now,
    };
  });
  return {
    messages,
    toolCalls,
    usage: { inputTokens: 100 * batch, outputTokens: 50 * batch, totalTokens: 150 * batch },
  };
}

/** Bytes of JSON text in a delta: its messages (a `run_commits` row's) and its tool call rows' args and results. */
export function deltaBytes(delta: CheckpointDelta): { messages: number; toolCalls: number } {
  const messages = delta.messages.reduce((s, m) => s + Buffer.byteLength(JSON.stringify(m)), 0);
  const toolCalls = delta.toolCalls.reduce(
    (s, c) => s + Buffer.byteLength(JSON.stringify(c.args)) + Buffer.byteLength(c.result ?? ''),
    0,
  );
  return { messages, toolCalls };
}

/** The events the engine stores with a typical batch's checkpoint: the model turn, each call started and completed, the commit. */
export function typicalEvents(run: ClaimedRun, batch: number): RunEvent[] {
  const at = new Date().toISOString();
  const event = (type: RunEvent['type'], data: Record<string, unknown>): RunEvent => ({
    type,
    runId: run.runId,
    epoch: run.epoch,
    data,
    at,
  });
  const ids = [1, 2, 3].map((call) => `call_${batch}_${call}`);
  return [
    event('ModelRequestStarted', { model: 'scripted:bench', messages: 1 + 4 * (batch - 1) }),
    event('ModelRequestCompleted', {
      toolCalls: 3,
      usage: { inputTokens: 100, outputTokens: 50, totalTokens: 150 },
    }),
    ...ids.map((toolCallId) => event('ToolCallStarted', { toolCallId, name: 'lookup', batch })),
    ...ids.map((toolCallId) => event('ToolCallCompleted', { toolCallId, name: 'lookup', batch })),
    event('CheckpointCommitted', { lastCheckpointAtMessageIndex: 1 + 4 * batch, messages: 4 }),
  ];
}
