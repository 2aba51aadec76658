import type { CheckpointStore } from '../checkpoint-store.js';
import { assertNever, LeaseLostError } from '../errors.js';
import { dispositionOfError, retryableHint } from '../lifecycle/error-disposition.js';
import { PauseSignal } from '../lifecycle/pause.js';
import { CLAIMABLE_STATUSES, RUN_TRANSITIONS } from '../lifecycle/run-status.js';
import type { RunEventSink, RunEventType } from '../events.js';
import type { Message } from '../messages.js';
import type { Model } from '../model.js';
import type { Entity } from '../registry.js';
import type { AttemptReason, RunErrorInfo, RunRecord } from '../run-types.js';
import { Checkpointer } from './checkpointer.js';
import type { RunMember } from './delegation.js';
import { delegationTool } from './delegation.js';
import { HandoverSignal } from './handover.js';
import { outputCheckFor } from './output-type.js';
import type { RetryPolicy } from './model-retry.js';
import { executableFromTool, type ExecutableTool } from './tool-executable.js';
import { runTurnLoop } from './turn-loop.js';

/** How an execution ended. `handed-over`: stopped at a checkpoint for another worker to resume. */
export type ExecutionResult =
  | { outcome: 'finished'; run: RunRecord }
  | { outcome: 'handed-over'; runId: string };

/** Options of one execution of a run. */
export interface ExecuteOptions {
  /** Why this execution claims the run; recorded in its attempt. */
  reason: AttemptReason;
  /**
   * Aborting it cancels the run (CANCELLED is persisted), unless its reason is
   * a {@link LeaseLostError}: then the execution stops and writes nothing more.
   */
  signal?: AbortSignal;
  /** Aborting it asks the execution to stop at its next checkpoint and hand the run back. */
  handover?: AbortSignal;
  /** A new user message appended before resuming (continue with input). */
  input?: string;
  /** For a member run: the epoch of its team's execution; the claim fails with `LeaseLostError` once the team was claimed since. */
  parentEpoch?: number;
  /** Also claim the run from PAUSED (once nothing in its tree waits for a person): the resume a decision enqueued. */
  resumeFromPause?: boolean;
  /** The app's context for this execution's tools (`ctx.context`), over the engine's own. */
  context?: unknown;
  /** Called once the run is claimed, with the epoch this execution holds. */
  onClaim?(claim: { epoch: number; run: RunRecord }): void;
}

/** What an execution needs from the engine that started it. */
export interface ExecutionDeps {
  store: CheckpointStore;
  workerId: string;
  retry: RetryPolicy;
  modelFor(entity: Entity): Model;
  /** The app's context for tools when an execution gives none. */
  context?: unknown;
  onEvent?: RunEventSink;
  /** Runs a member's child run for a team's delegation. */
  memberRunner(parent: RunRecord, parentOptions: ExecuteOptions): RunMember;
}

/**
 * One claim of a run, from `claimRun` to its final write: loads the history
 * up to the last checkpoint, runs the turn loop and persists how it ended.
 */
export async function executeRun(
  deps: ExecutionDeps,
  entityOf: (run: RunRecord) => Entity,
  runId: string,
  options: ExecuteOptions,
): Promise<ExecutionResult> {
  const { epoch, run } = await deps.store.claimRun(runId, {
    workerId: deps.workerId,
    reason: options.reason,
    ...(options.resumeFromPause && { from: [...CLAIMABLE_STATUSES, ...RUN_TRANSITIONS.resumeFromPause.from] }),
    ...(options.parentEpoch === undefined ? {} : { parentEpoch: options.parentEpoch }),
  });
  options.onClaim?.({ epoch, run });
  const entity = entityOf(run);
  // A run with no checkpoint yet has no history to load.
  const history = run.lastCheckpointAtMessageIndex > 0 ? await deps.store.loadHistory(runId) : { messages: [], toolCalls: [] };
  const resumed = history.messages.length > 0;
  const checkpointer = new Checkpointer(
    deps.store,
    runId,
    epoch,
    run.checkpoint,
    run.lastCheckpointAtMessageIndex,
    deps.onEvent,
  );
  const emit = (type: RunEventType, data: Record<string, unknown>) => checkpointer.emit(type, data);
  // Taking over from an execution that died: clients drop the text it streamed but never committed.
  if (options.reason === 'recovered' || options.reason === 'reconciled') {
    checkpointer.publishLive('AttemptAbandoned', { epoch: epoch - 1 });
  }
  emit(options.reason === 'run' ? 'RunStarted' : 'RunContinued', {
    reason: options.reason,
    workerId: deps.workerId,
    entity: run.entity,
    lastCheckpointAtMessageIndex: run.lastCheckpointAtMessageIndex,
    createdAt: run.createdAt.toISOString(),
    ...(run.parentRunId && { parentRunId: run.parentRunId, parentToolCallId: run.parentToolCallId }),
  });
  const messages: Message[] = resumed ? history.messages : [{ role: 'user', content: run.input }];
  if (!resumed) checkpointer.add(messages);
  if (options.input !== undefined) {
    const message: Message = { role: 'user', content: options.input };
    messages.push(message);
    checkpointer.add([message]);
  }

  const signal = options.signal ?? new AbortController().signal;
  const output = entity.outputType ? outputCheckFor(entity.outputType) : undefined;
  const state = {
    runId,
    epoch,
    model: deps.modelFor(entity),
    instructions: [instructionsFor(entity), output?.instructions].filter(Boolean).join('\n\n'),
    output,
    tools: toolsFor(entity, deps.memberRunner(run, options)),
    maxTurns: entity.maxTurns,
    retry: deps.retry,
    messages,
    usage: run.usage,
    checkpointer,
    appContext: options.context ?? deps.context,
    signal,
    handover: options.handover,
    emit,
    actions: {
      list: () => deps.store.listRunActions(runId),
      consume: (actionId: string) => deps.store.consumeAction(runId, epoch, actionId),
    },
    memberPath: () => memberPathOf(deps.store, run),
  };

  try {
    const result = await runTurnLoop(state);
    // The next execution announces itself with RunContinued (reason `handover`).
    if (result.kind === 'handover') return { outcome: 'handed-over', runId };
    const finished = await checkpointer.finish('COMPLETED', result.content, null, state.usage, {
      type: 'RunCompleted',
      data: { content: result.content, usage: state.usage },
    });
    return { outcome: 'finished', run: finished };
  } catch (error) {
    if (error instanceof HandoverSignal) return { outcome: 'handed-over', runId };
    const lost = leaseLostReason(signal);
    if (lost) throw lost;
    if (error instanceof PauseSignal) {
      const paused = await checkpointer.finish('PAUSED', null, null, state.usage, { type: 'RunPaused', data: error.data });
      return { outcome: 'finished', run: paused };
    }
    const disposition = dispositionOfError(error);
    switch (disposition) {
      case 'stop-silently':
      case 'retry-job':
        // Write nothing more: a lost lease belongs to another execution; a retry resumes from the last checkpoint.
        throw error;
      case 'end-run-in-error':
        break;
      default:
        return assertNever(disposition);
    }
    if (signal.aborted) {
      const partial = lastAssistantText(state.messages);
      const cancelled = await checkpointer.finish('CANCELLED', partial, null, state.usage, {
        type: 'RunCancelled',
        data: { content: partial },
      });
      return { outcome: 'finished', run: cancelled };
    }
    const info = errorInfo(error);
    const failed = await checkpointer.finish('ERROR', null, info, state.usage, { type: 'RunError', data: { error: info } });
    return { outcome: 'finished', run: failed };
  }
}

/** Entity names from the root run down to `run`. */
async function memberPathOf(store: CheckpointStore, run: RunRecord): Promise<string[]> {
  const path = [run.entity.name];
  for (let parentId = run.parentRunId; parentId; ) {
    const parent = await store.getRun(parentId);
    if (!parent) break;
    path.unshift(parent.entity.name);
    parentId = parent.parentRunId;
  }
  return path;
}

function leaseLostReason(signal: AbortSignal): LeaseLostError | undefined {
  return signal.aborted && signal.reason instanceof LeaseLostError ? signal.reason : undefined;
}

function instructionsFor(entity: Entity): string {
  if (entity.kind === 'agent') {
    return [entity.role && `Your role: ${entity.role}`, entity.instructions].filter(Boolean).join('\n\n');
  }
  return entity.instructions;
}

function toolsFor(entity: Entity, runMember: RunMember): Map<string, ExecutableTool> {
  const tools =
    entity.kind === 'agent'
      ? entity.tools.map(executableFromTool)
      : [delegationTool(entity, runMember), ...entity.tools.map(executableFromTool)];
  return new Map(tools.map((t) => [t.name, t]));
}

function lastAssistantText(messages: readonly Message[]): string | null {
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i];
    if (message?.role === 'assistant' && message.content) return message.content;
  }
  return null;
}

/** The error a run ends with, as stored and shown by the API. */
export function errorInfo(error: unknown): RunErrorInfo {
  const retryable = retryableHint(error);
  const base = error instanceof Error ? { name: error.name, message: error.message } : { name: 'Error', message: String(error) };
  return retryable === undefined ? base : { ...base, retryable };
}
