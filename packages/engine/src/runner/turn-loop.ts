import { MaxTurnsExceededError } from '../errors.js';
import type { AssistantMessage, Message, ToolCallRequest, Usage } from '../messages.js';
import { addResponseUsage } from '../spend/run-usage.js';
import type { ModelPrices } from '../spend/model-prices.js';
import type { BudgetStopRule, TreeSpend } from '../spend/budget.js';
import { checkBudget } from './budget-check.js';
import type { Model, ModelStreamDelta, ToolSpec } from '../model.js';
import type { RunContentSink, RunEventType } from '../events.js';
import type { CheckpointMode, ToolCallRecord } from '../run-types.js';
import { DELEGATE_TOOL_NAME } from '../team.js';
import type { Checkpointer } from './checkpointer.js';
import { executeToolBatch, type ToolBatchContext } from './execute-tool-batch.js';
import {
  idempotencyKeyFor,
  recordedArguments,
  type ToolCallOutcome,
} from '../tool-call-outcome.js';
import { PauseSignal } from './pause-signal.js';
import {
  actionIdempotencyKey,
  actionSummary,
  type PendingActionRecord,
} from '../hitl/pending-action.js';
import {
  editedNote,
  interruptedMessage,
  planToolCalls,
  type DecidedCall,
} from '../hitl/plan-tool-calls.js';
import { respondWithRetry, type RetryPolicy } from './model-retry.js';
import { checkToolCallCap } from './tool-call-cap.js';
import type { OutputCheck } from './output-type.js';
import type { ExecutableTool } from '../executable-tool.js';
import type { ModelGate } from '../capacity/model-gate.js';
import { pauseIfSuspended } from './suspend-boundary.js';
import type { SuspendSwitch } from '../suspension.js';
import type { Clock } from '../engine-resources.js';

/** The state one execution of a run loops over. */
export interface TurnLoopState {
  runId: string;
  epoch: number;
  model: Model;
  instructions: string;
  tools: ReadonlyMap<string, ExecutableTool>;
  maxTurns: number;
  retry: RetryPolicy;
  /** Prices by model: each response's cost is added to the run's usage. */
  prices?: ModelPrices;
  /** What the run's tree spent and may spend: each model request is checked against it first. */
  spend?: TreeSpend;
  /** Whether a run over budget fails or pauses: the lifecycle's `budgetStopOf` (`lifecycle/budget-stop.ts`). */
  budgetStop: BudgetStopRule;
  /** Takes the fleet's permits for model requests (parks the run when none comes); absent: requests go straight out. */
  gate?: ModelGate;
  /** The run's tenant ('' for none): each model turn's answer names it, for metrics. */
  tenant: string;
  /** The full history so far, committed and not. */
  messages: Message[];
  usage: Usage;
  checkpointer: Checkpointer;
  /** The app's context for tools (`ctx.context`). */
  appContext?: unknown;
  /** The entity's `outputType`: a final answer it refuses is sent back to the model. */
  output?: OutputCheck;
  signal: AbortSignal;
  handover?: AbortSignal;
  /** The tree's suspend requests: the loop pauses the run at a checkpoint boundary when one names it. */
  suspend?: SuspendSwitch;
  /**
   * A continue request taken in but not yet in the history: its input (none
   * for an `upgrade` alone) is appended before the next model turn, after any
   * unfinished calls ran, and the commit that writes it marks it applied.
   */
  pendingContinue?: { requestId: string; input: Message[] };
  emit(type: RunEventType, data: Record<string, unknown>): void;
  /** Where the loop reads the time (call times, a budget action's expiry). */
  clock: Clock;
  /** Receives each model exchange and tool result as it happens (never stored); absent: nobody asked for content. */
  content?: RunContentSink;
  /** The run's pending actions: read on resume, consumed before an approved call runs. */
  actions: RunActions;
  /** Entity names from the root run down to this one (for new pending actions). */
  memberPath(): Promise<string[]>;
}

/** The run's human-in-the-loop actions, as the turn loop reads and consumes them. */
export interface RunActions {
  list(): Promise<PendingActionRecord[]>;
  /** The fenced write that claims a decided call for execution; false when it was claimed before. */
  consume(actionId: string): Promise<boolean>;
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
  await pauseIfSuspended(state, batch);
  const unfinished = unfinishedCalls(state.messages);
  if (unfinished.length > 0) {
    // A resume (after a pause or a crash): the calls may have actions with decisions.
    const actions = new Map((await state.actions.list()).map((a) => [a.toolCallId, a]));
    await runBatch(state, unfinished, batch, actions);
    await state.checkpointer.afterBatch(state.usage);
  }
  if (state.pendingContinue) {
    // Marked applied by the same commit as its input, never by the interrupted batch's before it.
    const { requestId, input } = state.pendingContinue;
    state.messages.push(...input);
    state.checkpointer.add(input);
    state.checkpointer.applyContinueRequest(requestId);
    state.pendingContinue = undefined;
  }

  const specs: ToolSpec[] = [...state.tools.values()].map((t) => t.spec);
  for (let turn = 1; ; turn++) {
    if (state.handover?.aborted) {
      await state.checkpointer.commit(state.usage);
      return { kind: 'handover' };
    }
    state.signal.throwIfAborted();
    await pauseIfSuspended(state, batch);
    if (turn > state.maxTurns) throw new MaxTurnsExceededError(state.runId, state.maxTurns);

    const message = await modelTurn(state, specs);
    state.messages.push(message);
    const turnFirst = commitsTurnFirst(state.checkpointer.mode, message);
    state.checkpointer.add(
      [message],
      turnFirst ? runningRecords(state.runId, message, batch + 1, state.clock.now()) : [],
    );
    if (!hasToolCalls(message)) {
      const checked = state.output?.check(message.content ?? '');
      if (!checked) return { kind: 'answer', content: message.content ?? '' };
      if (checked.ok) return { kind: 'answer', content: checked.content };
      const retry: Message = { role: 'user', content: checked.retryMessage };
      state.messages.push(retry);
      state.checkpointer.add([retry]);
      continue;
    }

    batch += 1;
    const pendingBeforeTurn = state.checkpointer.pendingMessageCount - 1;
    try {
      if (turnFirst) await state.checkpointer.commit(state.usage);
      await runBatch(state, message.toolCalls, batch, NO_ACTIONS);
    } catch (error) {
      // A pause keeps the turn: its finish commits it with the results so far and the pending actions.
      if (!turnFirst && !(error instanceof PauseSignal)) {
        state.messages.splice(state.messages.indexOf(message));
        state.checkpointer.truncatePending(pendingBeforeTurn);
      }
      throw error;
    }
    await state.checkpointer.afterBatch(state.usage);
  }
}

/**
 * Whether a tool-call turn is committed (with `running` rows) before its
 * calls run: always in `tool-call` mode, and in every mode for a turn that
 * delegates, so each member run belongs to exactly one committed tool call
 * and a resumed team never delegates again under fresh tool-call ids.
 */
function commitsTurnFirst(mode: CheckpointMode, message: AssistantMessage): boolean {
  return (
    mode === 'tool-call' ||
    (message.toolCalls ?? []).some((call) => call.name === DELEGATE_TOOL_NAME)
  );
}

async function modelTurn(state: TurnLoopState, tools: ToolSpec[]): Promise<AssistantMessage> {
  const request = { instructions: state.instructions, messages: state.messages, tools };
  await checkBudget(state, request);
  // Announced when the request goes out, after its permit: a capacity wait is not the model's time.
  let started = false;
  const announce = () => {
    if (started) return;
    started = true;
    state.emit('ModelRequestStarted', { model: state.model.name, messages: state.messages.length });
  };
  // Streamed text goes out live as `ModelDelta`s; `offset` places each piece, so a retry restarts at 0.
  const messageIndex = state.messages.length;
  let offset = 0;
  const onDelta = (delta: ModelStreamDelta) => {
    if (delta.kind !== 'text' || delta.text === '') return;
    state.checkpointer.publishLive('ModelDelta', {
      epoch: state.epoch,
      message_index: messageIndex,
      offset,
      text: delta.text,
    });
    offset += delta.text.length;
  };
  let capacityWaitMs = 0;
  const response = await respondWithRetry(
    state.model,
    {
      instructions: state.instructions,
      messages: state.messages,
      tools,
      signal: state.signal,
      onDelta,
    },
    state.retry,
    {
      gate: state.gate,
      onRequest: announce,
      onPermit: (waitedMs) => (capacityWaitMs += waitedMs),
      onRetry: (error, attempt, delayMs) => {
        offset = 0;
        state.emit('ModelRequestCompleted', {
          retrying: true,
          attempt,
          delayMs,
          error: error.message,
        });
      },
      onRateLimited: (error, pausedMs) => {
        offset = 0;
        state.emit('ModelRequestCompleted', {
          retrying: true,
          rateLimited: true,
          model: state.model.name,
          pausedMs,
          error: error.message,
        });
      },
    },
  );
  const before = state.usage;
  state.usage = addResponseUsage(state.usage, state.model.name, response.usage, state.prices);
  const costMicroUsd = (state.usage.costMicroUsd ?? 0) - (before.costMicroUsd ?? 0);
  state.spend?.add(state.usage.totalTokens - before.totalTokens, costMicroUsd);
  state.content?.({
    kind: 'model',
    runId: state.runId,
    instructions: state.instructions,
    messages: state.messages,
    response,
  });
  state.emit('ModelRequestCompleted', {
    model: state.model.name,
    toolCalls: response.message.toolCalls?.length ?? 0,
    usage: response.usage ?? null,
    ...(response.responseModel !== undefined && { responseModel: response.responseModel }),
    ...(response.finishReason !== undefined && { finishReason: response.finishReason }),
    // The response's cost at this worker's prices, and the run's tenant (the one its permits were
    // asked for): metrics label tokens, cost and the capacity wait with it.
    costMicroUsd,
    tenant: state.tenant,
    ...(capacityWaitMs > 0 && { capacityWaitMs }),
  });
  checkToolCallCap(state.runId, response.message);
  return response.message;
}

async function runBatch(
  state: TurnLoopState,
  calls: readonly ToolCallRequest[],
  batch: number,
  actions: ReadonlyMap<string, PendingActionRecord>,
): Promise<void> {
  const plan = await planToolCalls(calls, {
    runId: state.runId,
    batch,
    signal: state.signal,
    tools: state.tools,
    actions,
    memberPath: state.memberPath,
    clock: state.clock,
  });
  const toolCallMode = state.checkpointer.mode === 'tool-call';
  const commits: Promise<void>[] = [];
  const finished = (outcome: ToolCallOutcome): void => {
    emitOutcome(state, outcome);
    if (!toolCallMode) return;
    recordOutcome(state, outcome);
    const commit = state.checkpointer.afterCall(state.usage);
    commit.catch(() => undefined);
    commits.push(commit);
  };
  const context: ToolBatchContext = {
    runId: state.runId,
    epoch: state.epoch,
    batch,
    signal: state.signal,
    tools: state.tools,
    appContext: state.appContext,
    clock: state.clock,
    onCallStarted: (call) => {
      const mcpServer = state.tools.get(call.name)?.mcpServer;
      state.emit('ToolCallStarted', {
        toolCallId: call.id,
        name: call.name,
        batch,
        ...(mcpServer !== undefined && { mcpServer }),
      });
    },
    onCallFinished: finished,
  };
  const outcomes = plan.execute.length > 0 ? await executeToolBatch(plan.execute, context) : [];
  for (const outcome of plan.settled) finished(outcome);
  outcomes.push(...plan.settled);
  await Promise.all(commits);
  if (!toolCallMode) for (const outcome of outcomes) recordOutcome(state, outcome);
  for (const decided of plan.decided) await runDecidedCall(state, decided, context);
  if (plan.gated.length > 0 || plan.waiting.length > 0) {
    state.checkpointer.pause(plan.gated.map((g) => g.action));
    throw new PauseSignal(state.runId, {
      actions: [...plan.gated.map((g) => g.action), ...plan.waiting].map(actionSummary),
    });
  }
}

/**
 * One approved or edited call: consumed first (the fenced write that makes
 * it run at most once), executed under the action's idempotency key, and
 * its result committed at once in every checkpoint mode.
 */
async function runDecidedCall(
  state: TurnLoopState,
  decided: DecidedCall,
  context: ToolBatchContext,
): Promise<void> {
  const { call, action } = decided;
  let outcome: ToolCallOutcome;
  if (await state.actions.consume(action.actionId)) {
    const [executed] = await executeToolBatch(
      [{ ...call, arguments: JSON.stringify(decided.args) }],
      {
        ...context,
        idempotencyKeyOf: () => actionIdempotencyKey(action.actionId),
        onCallFinished: (result) => {
          if (decided.edited) {
            result.message.content = editedNote(decided.args) + result.message.content;
            result.record.result = result.message.content;
          }
          emitOutcome(state, result);
        },
      },
    );
    outcome = executed!;
  } else {
    const content = interruptedMessage(call.name, decided.args, action.actionId);
    const now = state.clock.now();
    outcome = {
      message: { role: 'tool', toolCallId: call.id, name: call.name, content, isError: true },
      record: {
        toolCallId: call.id,
        name: call.name,
        args: decided.args,
        result: content,
        status: 'error',
        batch: context.batch,
        idempotencyKey: actionIdempotencyKey(action.actionId),
        childRunId: null,
        startedAt: now,
        endedAt: now,
      },
    };
    emitOutcome(state, outcome);
  }
  recordOutcome(state, outcome);
  await state.checkpointer.commit(state.usage);
}

function emitOutcome(state: TurnLoopState, { record }: ToolCallOutcome): void {
  state.content?.({
    kind: 'tool',
    runId: state.runId,
    toolCallId: record.toolCallId,
    args: record.args,
    result: record.result,
  });
  state.emit(record.status === 'error' ? 'ToolCallError' : 'ToolCallCompleted', {
    toolCallId: record.toolCallId,
    name: record.name,
    batch: record.batch,
    ...(record.status === 'error' && { error: record.result }),
  });
}

const NO_ACTIONS: ReadonlyMap<string, PendingActionRecord> = new Map();

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
function runningRecords(
  runId: string,
  message: AssistantMessage,
  batch: number,
  startedAt: Date,
): ToolCallRecord[] {
  return (message.toolCalls ?? []).map((call) => ({
    toolCallId: call.id,
    name: call.name,
    args: recordedArguments(call),
    result: null,
    status: 'running' as const,
    batch,
    idempotencyKey: idempotencyKeyFor(runId, call.id),
    childRunId: null,
    startedAt,
    endedAt: null,
  }));
}
