import type { CheckpointStore, Claim } from '../checkpoint-store.js';
import { isEntityPath, runEntityPath } from '../entity-path.js';
import { AttemptsExhaustedError, assertNever, ContinueArrivedError, LeaseLostError } from '../errors.js';
import { dispositionOfError, retryableHint } from '../lifecycle/error-disposition.js';
import { PauseSignal } from '../lifecycle/pause.js';
import { FINISH_EVENT_TYPE, type FinishStatus, type RunStatus } from '../lifecycle/run-status.js';
import { parseStoredMessages } from '../lifecycle/stored-state.js';
import type { RunEventSink, RunEventType } from '../events.js';
import type { Message } from '../messages.js';
import type { Model } from '../model.js';
import type { Entity } from '../registry.js';
import type { AttemptReason, ContinueRequestRecord, RunErrorInfo, RunRecord } from '../run-types.js';
import { Checkpointer } from './checkpointer.js';
import type { RunMember } from './delegation.js';
import { delegationTool } from './delegation.js';
import { HandoverSignal } from './handover.js';
import { outputCheckFor } from './output-type.js';
import type { RetryPolicy } from './model-retry.js';
import { executableFromTool, type ExecutableTool } from './tool-executable.js';
import { runTurnLoop, type TurnLoopState } from './turn-loop.js';

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
  /** For a member run: the epoch of its team's execution; the claim fails with `LeaseLostError` once the team was claimed since. */
  parentEpoch?: number;
  /** Statuses the claim may start from. @defaultValue CLAIMABLE_STATUSES */
  from?: readonly RunStatus[];
  /** The app's context for this execution's tools (`ctx.context`), over the engine's own. */
  context?: unknown;
  /**
   * For a member run: the member its team delegated to, run as is instead of
   * looking the run's entity name up (a member run stored under a plain name
   * still runs its own team's member once another team has one of that name).
   */
  member?: Entity;
  /**
   * The definition hash of the entity this execution runs (recorded on the run by the claim) and the
   * hash the run had before; when they differ, the run announces `DefinitionUpgraded { from, to }`.
   * @defaultValue the run's hash is left as it is
   */
  definition?: { hash: string; replaces: string | null };
  /** Called once the run is claimed, with the epoch this execution holds. */
  onClaim?(claim: { epoch: number; run: RunRecord }): void;
}

/** What an execution needs from the engine that started it. */
export interface ExecutionDeps {
  store: CheckpointStore;
  workerId: string;
  retry: RetryPolicy;
  /** Claims without a new checkpoint beyond which the run ends in ERROR (`CAIRN_MAX_ATTEMPTS`). */
  maxAttempts: number;
  modelFor(entity: Entity): Model;
  /** The app's context for tools when an execution gives none. */
  context?: unknown;
  onEvent?: RunEventSink;
  /** Runs a member's child run for a team's delegation. */
  memberRunner(parent: RunRecord, parentOptions: ExecuteOptions): RunMember;
}

/** How the execution is about to end the run. */
interface Ending {
  status: FinishStatus;
  content: string | null;
  error: RunErrorInfo | null;
  event: Record<string, unknown>;
}

/**
 * One claim of a run, from `claimRun` to its final write: loads the history
 * up to the last checkpoint, takes in a waiting continue's input, runs the
 * turn loop and persists how it ended. A run that cannot make progress (its
 * entity unknown, its stored state unreadable, or claimed more than
 * `maxAttempts` times with no new checkpoint) ends in ERROR saying which.
 */
export async function executeRun(
  deps: ExecutionDeps,
  entityOf: (run: RunRecord) => Entity,
  runId: string,
  options: ExecuteOptions,
): Promise<ExecutionResult> {
  const claim = await deps.store.claimRun(runId, {
    workerId: deps.workerId,
    reason: options.reason,
    ...(options.parentEpoch === undefined ? {} : { parentEpoch: options.parentEpoch }),
    ...(options.from === undefined ? {} : { from: options.from }),
    ...(options.definition === undefined ? {} : { definitionHash: options.definition.hash }),
  });
  const { epoch, run } = claim;
  options.onClaim?.({ epoch, run });
  // A run with no checkpoint yet has no history to load.
  const history = run.lastCheckpointAtMessageIndex > 0 ? await deps.store.loadHistory(runId) : { messages: [], toolCalls: [] };
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
  const upgraded = options.definition;
  if (upgraded && upgraded.replaces !== null && upgraded.replaces !== upgraded.hash) {
    emit('DefinitionUpgraded', { from: upgraded.replaces, to: upgraded.hash });
  }
  checkpointer.track(history.toolCalls);
  const signal = options.signal ?? new AbortController().signal;

  let state: TurnLoopState;
  try {
    state = prepare(deps, entityOf, claim, history.messages, checkpointer, signal, options, emit);
  } catch (error) {
    return finish(checkpointer, endingFor(error, signal, []), run.usage);
  }

  for (;;) {
    let ending: Ending;
    try {
      const result = await runTurnLoop(state);
      // The next execution announces itself with RunContinued (reason `handover`).
      if (result.kind === 'handover') return { outcome: 'handed-over', runId };
      ending = { status: 'COMPLETED', content: result.content, error: null, event: { content: result.content, usage: state.usage } };
    } catch (error) {
      if (error instanceof HandoverSignal) return { outcome: 'handed-over', runId };
      ending = endingFor(error, signal, state.messages);
    }
    try {
      return await finish(checkpointer, ending, state.usage);
    } catch (error) {
      if (!(error instanceof ContinueArrivedError)) throw error;
      // A continue arrived while this execution ran: answer its input too, then finish.
      const request = await deps.store.readContinueRequest(runId, error.requestId);
      if (request) takeIn(state, request);
    }
  }
}

/** Builds the turn loop's state; throws what makes the run unrunnable (attempt cap, stored state, unknown entity). */
function prepare(
  deps: ExecutionDeps,
  entityOf: (run: RunRecord) => Entity,
  claim: Claim,
  storedMessages: readonly unknown[],
  checkpointer: Checkpointer,
  signal: AbortSignal,
  options: ExecuteOptions,
  emit: TurnLoopState['emit'],
): TurnLoopState {
  const { run, epoch } = claim;
  if (claim.claimsSinceProgress > deps.maxAttempts) {
    throw new AttemptsExhaustedError(run.runId, claim.claimsSinceProgress, deps.maxAttempts);
  }
  const stored = parseStoredMessages(run.runId, storedMessages);
  const entity = options.member ?? entityOf(run);
  const messages: Message[] = stored.length > 0 ? [...stored] : [{ role: 'user', content: run.input }];
  if (stored.length === 0) checkpointer.add(messages);
  const output = entity.outputType ? outputCheckFor(entity.outputType) : undefined;
  const state: TurnLoopState = {
    runId: run.runId,
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
      list: () => deps.store.listRunActions(run.runId),
      consume: (actionId: string) => deps.store.consumeAction(run.runId, epoch, actionId),
    },
    memberPath: () => memberPathOf(deps.store, run),
  };
  if (claim.continueRequest) takeIn(state, claim.continueRequest);
  return state;
}

/**
 * Takes a continue request in: its input becomes a user message (after the
 * unfinished calls of an interrupted turn, which the loop runs first), and
 * the commit that writes it marks the request applied, so it is applied
 * exactly once whatever crashes in between.
 */
function takeIn(state: TurnLoopState, request: ContinueRequestRecord): void {
  state.pendingContinue = { requestId: request.requestId, input: request.input === null ? [] : [{ role: 'user', content: request.input }] };
}

/** How an error ends the run: rethrown when the run is not this execution's to end. */
function endingFor(error: unknown, signal: AbortSignal, messages: readonly Message[]): Ending {
  const lost = leaseLostReason(signal);
  if (lost) throw lost;
  if (error instanceof PauseSignal) return { status: 'PAUSED', content: null, error: null, event: error.data };
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
    const partial = lastAssistantText(messages);
    return { status: 'CANCELLED', content: partial, error: null, event: { content: partial } };
  }
  const info = errorInfo(error);
  return { status: 'ERROR', content: null, error: info, event: { error: info } };
}

/** Writes the ending with its final event (stored in the same statement). */
async function finish(checkpointer: Checkpointer, ending: Ending, usage: RunRecord['usage']): Promise<ExecutionResult> {
  const run = await checkpointer.finish(ending.status, ending.content, ending.error, usage, {
    type: FINISH_EVENT_TYPE[ending.status],
    data: ending.event,
  });
  return { outcome: 'finished', run };
}

/**
 * Entity names from the root run down to `run`: a member run's name is its
 * path already; a member run stored before members were named by path
 * (a plain name under a parent run) gets its path from its parent runs.
 */
async function memberPathOf(store: CheckpointStore, run: RunRecord): Promise<string[]> {
  if (isEntityPath(run.entity.name) || !run.parentRunId) return runEntityPath(run.entity.name, undefined);
  const parent = await store.getRun(run.parentRunId);
  return runEntityPath(run.entity.name, parent && (await memberPathOf(store, parent)));
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
