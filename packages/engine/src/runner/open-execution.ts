import type { Claim, CheckpointStore } from '../checkpoint-store.js';
import type { EngineResources } from '../engine-resources.js';
import { isEntityPath, runEntityPath } from '../entity-path.js';
import type { RunEventType } from '../events.js';
import type { Message } from '../messages.js';
import type { Entity } from '../registry.js';
import type { AttemptReason, ContinueRequestRecord, RunRecord } from '../run-types.js';
import { Checkpointer } from './checkpointer.js';
import { delegationTool, type RunMember } from './delegation.js';
import { outputCheckFor } from './output-type.js';
import { executableFromTool, type ExecutableTool } from '../executable-tool.js';
import type { TurnLoopState } from './turn-loop.js';
import { ModelGate, type CapacitySettings, type CarriedWait } from '../capacity/model-gate.js';
import type { BudgetStopRule, TreeSpend } from '../spend/budget.js';
import type { SuspendSwitch } from '../suspension.js';

/** A claimed run, opened for execution: its checkpointer, and its history as stored. */
export interface OpenedExecution {
  checkpointer: Checkpointer;
  /** The messages up to the last checkpoint, as stored (not yet checked). */
  storedMessages: readonly unknown[];
}

/** What the turn loop of an opened execution runs: the lifecycle's choices for it. */
export interface TurnLoopSetup {
  entity: Entity;
  /** The stored history, checked; empty for a run that starts from its input. */
  messages: readonly Message[];
  /** Runs a team's delegations as member runs. */
  runMember: RunMember;
  signal: AbortSignal;
  handover?: AbortSignal;
  /** The tree's suspend requests. */
  suspend?: SuspendSwitch;
  /** The app's context for this execution's tools, over the engine's own. */
  context?: unknown;
  /** How long the run had waited for a model permit before this execution. @defaultValue 0 */
  carriedWait: CarriedWait;
  /** The tree's spend the run is held to. */
  spend: TreeSpend;
  /** Whether a run over budget fails or pauses: the lifecycle's `budgetStopOf`. */
  budgetStop: BudgetStopRule;
}

/**
 * Opens an execution of a claimed run: loads the history up to the last
 * checkpoint, makes its checkpointer, and announces it (`RunStarted` or
 * `RunContinued`, `AttemptAbandoned` first when it takes over from an
 * execution that died, `DefinitionUpgraded` when it runs on another definition).
 */
export async function openExecution(
  resources: EngineResources,
  claim: Claim,
  options: { reason: AttemptReason; definition?: { hash: string; replaces: string | null } },
): Promise<OpenedExecution> {
  const { epoch, run } = claim;
  // A run with no checkpoint yet has no history to load.
  const history =
    run.lastCheckpointAtMessageIndex > 0
      ? await resources.store.loadHistory(run.runId)
      : { messages: [], toolCalls: [] };
  const checkpointer = new Checkpointer(
    resources.store,
    run.runId,
    epoch,
    run.checkpoint,
    run.lastCheckpointAtMessageIndex,
    resources.events,
    resources.clock,
  );
  // Taking over from an execution that died: clients drop the text it streamed but never committed.
  if (options.reason === 'recovered' || options.reason === 'reconciled') {
    checkpointer.publishLive('AttemptAbandoned', { epoch: epoch - 1 });
  }
  checkpointer.emit(options.reason === 'run' ? 'RunStarted' : 'RunContinued', {
    reason: options.reason,
    workerId: resources.workerId,
    entity: run.entity,
    lastCheckpointAtMessageIndex: run.lastCheckpointAtMessageIndex,
    createdAt: run.createdAt.toISOString(),
    ...(run.parentRunId && {
      parentRunId: run.parentRunId,
      parentToolCallId: run.parentToolCallId,
    }),
  });
  const upgraded = options.definition;
  if (upgraded && upgraded.replaces !== null && upgraded.replaces !== upgraded.hash) {
    checkpointer.emit('DefinitionUpgraded', { from: upgraded.replaces, to: upgraded.hash });
  }
  checkpointer.track(history.toolCalls);
  return { checkpointer, storedMessages: history.messages };
}

/** The turn loop's state for an opened execution: a run with no history starts from its input. */
export function turnLoopStateFor(
  resources: EngineResources,
  claim: Claim,
  checkpointer: Checkpointer,
  setup: TurnLoopSetup,
): TurnLoopState {
  const { run, epoch } = claim;
  const { entity } = setup;
  const messages: Message[] =
    setup.messages.length > 0 ? [...setup.messages] : [{ role: 'user', content: run.input }];
  if (setup.messages.length === 0) checkpointer.add(messages);
  const output = entity.outputType ? outputCheckFor(entity.outputType) : undefined;
  const { store } = resources;
  return {
    runId: run.runId,
    epoch,
    model: resources.model ?? entity.model,
    instructions: [instructionsFor(entity), output?.instructions].filter(Boolean).join('\n\n'),
    output,
    tools: toolsFor(entity, setup.runMember),
    maxTurns: entity.maxTurns,
    retry: resources.limits.retry,
    prices: resources.prices,
    spend: setup.spend,
    budgetStop: setup.budgetStop,
    gate: resources.capacity && gateFor(resources, resources.capacity, run, checkpointer, setup),
    tenant: run.tenantId ?? '',
    messages,
    usage: run.usage,
    checkpointer,
    appContext: setup.context ?? resources.context,
    signal: setup.signal,
    handover: setup.handover,
    suspend: setup.suspend,
    emit: (type: RunEventType, data: Record<string, unknown>) => checkpointer.emit(type, data),
    content: resources.content,
    clock: resources.clock,
    actions: {
      list: () => store.listRunActions(run.runId),
      consume: (actionId: string) => store.consumeAction(run.runId, epoch, actionId),
    },
    memberPath: () => memberPathOf(store, run),
  };
}

/**
 * Takes a continue request in: its input becomes a user message (after the
 * unfinished calls of an interrupted turn, which the loop runs first), and
 * the commit that writes it marks the request applied, so it is applied
 * exactly once whatever crashes in between.
 */
export function takeIn(state: TurnLoopState, request: ContinueRequestRecord): void {
  state.pendingContinue = {
    requestId: request.requestId,
    input: request.input === null ? [] : [{ role: 'user', content: request.input }],
  };
}

/**
 * Entity names from the root run down to `run`: a member run's name is its
 * path already; a member run stored before members were named by path
 * (a plain name under a parent run) gets its path from its parent runs.
 */
export async function memberPathOf(store: CheckpointStore, run: RunRecord): Promise<string[]> {
  if (isEntityPath(run.entity.name) || !run.parentRunId)
    return runEntityPath(run.entity.name, undefined);
  const parent = await store.getRun(run.parentRunId);
  return runEntityPath(run.entity.name, parent && (await memberPathOf(store, parent)));
}

/**
 * The execution's gate to the fleet's model capacity: a run in `run` mode,
 * with no checkpoint to stand on, waits in place (announcing it once) where
 * the others park.
 */
function gateFor(
  resources: Pick<EngineResources, 'clock'>,
  settings: CapacitySettings,
  run: RunRecord,
  checkpointer: Checkpointer,
  setup: TurnLoopSetup,
): ModelGate {
  const mayPark = run.checkpoint !== 'run';
  return new ModelGate(settings, {
    runId: run.runId,
    tenant: run.tenantId ?? '',
    priority: run.priority,
    createdAt: run.createdAt.getTime(),
    mayPark,
    carried: setup.carriedWait,
    signal: setup.signal,
    onWait: ({ model, retryAfterMs, reason, waitedMs }) => {
      if (mayPark) return; // the park's own write stores its CapacityWait
      const until = new Date(resources.clock.now().getTime() + retryAfterMs).toISOString();
      checkpointer.emit('CapacityWait', { model, until, reason, waitedMs });
    },
  });
}

function instructionsFor(entity: Entity): string {
  if (entity.kind === 'agent') {
    return [entity.role && `Your role: ${entity.role}`, entity.instructions]
      .filter(Boolean)
      .join('\n\n');
  }
  return entity.instructions;
}

/** The tools a run of `entity` offers its model: a team's delegation tool (its members run by `runMember`) first, then the entity's own. */
export function toolsFor(entity: Entity, runMember: RunMember): Map<string, ExecutableTool> {
  const tools =
    entity.kind === 'agent'
      ? entity.tools.map(executableFromTool)
      : [delegationTool(entity, runMember), ...entity.tools.map(executableFromTool)];
  return new Map(tools.map((t) => [t.name, t]));
}
