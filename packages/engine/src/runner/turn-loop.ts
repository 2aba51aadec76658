import { MaxTurnsExceededError } from '../errors.js';
import type { AssistantMessage, Message, ToolCallRequest, Usage } from '../messages.js';
import { addUsage } from '../messages.js';
import type { Model, ToolSpec } from '../model.js';
import type { RunEventType } from '../events.js';
import type { ToolCallRecord } from '../run-types.js';
import type { Checkpointer } from './checkpointer.js';
import { executeToolBatch, idempotencyKeyFor, recordedArguments, type ToolCallOutcome } from './execute-tool-batch.js';
import { respondWithRetry, type RetryPolicy } from './model-retry.js';
import type { ExecutableTool } from './tool-executable.js';

/** The state one execution of a run loops over. */
export interface TurnLoopState {
  runId: string;
  epoch: number;
  model: Model;
  instructions: string;
  tools: ReadonlyMap<string, ExecutableTool>;
  maxTurns: number;
  retry: RetryPolicy;
  /** The full history so far, committed and not. */
  messages: Message[];
  usage: Usage;
  checkpointer: Checkpointer;
  signal: AbortSignal;
  handover?: AbortSignal;
  emit(type: RunEventType, data: Record<string, unknown>): void;
}

/** What the loop ended with: a final answer, or a hand-back at a checkpoint. */
export type TurnLoopResult = { kind: 'answer'; content: string } | { kind: 'handover' };

/**
 * Model turn, tool batch, model turn, ... until the model answers without
 * tool calls. Checkpoints per the run's mode; a tool-call turn left
 * unfinished by a crash (`tool-call` mode) has only its missing calls run.
 */
export async function runTurnLoop(state: TurnLoopState): Promise<TurnLoopResult> {
  let batch = state.messages.filter(hasToolCalls).length;
  const unfinished = unfinishedCalls(state.messages);
  if (unfinished.length > 0) await runBatch(state, unfinished, batch);

  const specs: ToolSpec[] = [...state.tools.values()].map((t) => t.spec);
  for (let turn = 1; ; turn++) {
    if (state.handover?.aborted) {
      await state.checkpointer.commit(state.usage);
      return { kind: 'handover' };
    }
    state.signal.throwIfAborted();
    if (turn > state.maxTurns) throw new MaxTurnsExceededError(state.runId, state.maxTurns);

    const message = await modelTurn(state, specs);
    state.messages.push(message);
    const toolCallMode = state.checkpointer.mode === 'tool-call';
    state.checkpointer.add([message], toolCallMode ? runningRecords(state.runId, message, batch + 1) : []);
    if (!hasToolCalls(message)) return { kind: 'answer', content: message.content ?? '' };

    batch += 1;
    const pendingBeforeTurn = state.checkpointer.pendingMessageCount - 1;
    try {
      await state.checkpointer.beforeBatch(state.usage);
      await runBatch(state, message.toolCalls, batch);
    } catch (error) {
      if (!toolCallMode) {
        state.messages.splice(state.messages.indexOf(message));
        state.checkpointer.truncatePending(pendingBeforeTurn);
      }
      throw error;
    }
    await state.checkpointer.afterBatch(state.usage);
  }
}

async function modelTurn(state: TurnLoopState, tools: ToolSpec[]): Promise<AssistantMessage> {
  state.emit('ModelRequestStarted', { model: state.model.name, messages: state.messages.length });
  const response = await respondWithRetry(
    state.model,
    { instructions: state.instructions, messages: state.messages, tools, signal: state.signal },
    state.retry,
    (error, attempt, delayMs) =>
      state.emit('ModelRequestCompleted', { retrying: true, attempt, delayMs, error: error.message }),
  );
  state.usage = addUsage(state.usage, response.usage);
  state.emit('ModelRequestCompleted', {
    toolCalls: response.message.toolCalls?.length ?? 0,
    usage: response.usage ?? null,
  });
  return response.message;
}

async function runBatch(
  state: TurnLoopState,
  calls: readonly ToolCallRequest[],
  batch: number,
): Promise<void> {
  const toolCallMode = state.checkpointer.mode === 'tool-call';
  const commits: Promise<void>[] = [];
  const outcomes = await executeToolBatch(calls, {
    runId: state.runId,
    epoch: state.epoch,
    batch,
    signal: state.signal,
    tools: state.tools,
    onCallStarted: (call) =>
      state.emit('ToolCallStarted', { toolCallId: call.id, name: call.name, batch }),
    onCallFinished: (outcome) => {
      const { record } = outcome;
      state.emit(record.status === 'error' ? 'ToolCallError' : 'ToolCallCompleted', {
        toolCallId: record.toolCallId,
        name: record.name,
        batch,
        ...(record.status === 'error' && { error: record.result }),
      });
      if (!toolCallMode) return;
      recordOutcome(state, outcome);
      const commit = state.checkpointer.afterCall(state.usage);
      commit.catch(() => undefined);
      commits.push(commit);
    },
  });
  await Promise.all(commits);
  if (!toolCallMode) for (const outcome of outcomes) recordOutcome(state, outcome);
}

function recordOutcome(state: TurnLoopState, outcome: ToolCallOutcome): void {
  state.messages.push(outcome.message);
  state.checkpointer.add([outcome.message], [outcome.record]);
}

function hasToolCalls(
  message: Message,
): message is AssistantMessage & { toolCalls: ToolCallRequest[] } {
  return message.role === 'assistant' && (message.toolCalls?.length ?? 0) > 0;
}

/** Tool calls of the last tool-call turn that have no result yet. */
function unfinishedCalls(messages: readonly Message[]): ToolCallRequest[] {
  let index = messages.length - 1;
  const answered = new Set<string>();
  while (index >= 0 && messages[index]?.role === 'tool') {
    answered.add((messages[index] as { toolCallId: string }).toolCallId);
    index -= 1;
  }
  const turn = messages[index];
  if (!turn || !hasToolCalls(turn)) return [];
  return turn.toolCalls.filter((call) => !answered.has(call.id));
}

/** `running` rows for a tool-call turn, written ahead of execution in `tool-call` mode. */
function runningRecords(runId: string, message: AssistantMessage, batch: number): ToolCallRecord[] {
  return (message.toolCalls ?? []).map((call) => ({
    toolCallId: call.id,
    name: call.name,
    args: recordedArguments(call),
    result: null,
    status: 'running' as const,
    batch,
    idempotencyKey: idempotencyKeyFor(runId, call.id),
    childRunId: null,
    startedAt: new Date(),
    endedAt: null,
  }));
}

