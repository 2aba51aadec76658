import type { EngineResources } from '../engine-resources.js';
import {
  AttemptsExhaustedError,
  ContinueArrivedError,
  SuspendRequestedError,
  UserError,
} from '../errors.js';
import { PauseSignal } from '../runner/pause-signal.js';
import { batchesOf, suspendSignal } from '../runner/suspend-boundary.js';
import type { Registry } from '../registry.js';
import type { Claim } from '../checkpoint-store.js';
import type { RunRecord } from '../run-types.js';
import { HandoverSignal } from '../runner/handover.js';
import { CapacityParkSignal } from '../capacity/capacity-park-signal.js';
import { TreeSpend } from '../spend/budget.js';
import { sumUsage } from '../spend/run-usage.js';
import { tenantBudgetOf, type TenantHold } from '../spend/tenant-budget.js';
import type { Checkpointer } from '../runner/checkpointer.js';
import { memberPathOf, openExecution, takeIn, turnLoopStateFor } from '../runner/open-execution.js';
import { runTurnLoop, type TurnLoopState } from '../runner/turn-loop.js';
import { checkAttemptsCap } from './attempts-cap.js';
import { budgetStopOf } from './budget-stop.js';
import { claimExecution } from './claim-execution.js';
import { deadlineSignal } from './deadline.js';
import type { ExecuteOptions, ExecutionResult } from './execute-options.js';
import { memberRunner } from './member-runs.js';
import { answeredEnding, endingOfError, writeEnding, type RunEnding } from './run-ending.js';
import { parseStoredMessages } from './stored-state.js';

/**
 * One claim of a run, from the claim to its final write: claims it, has the
 * runner open the execution and run the turn loop, and decides how it ends.
 * A run that cannot make progress (claimed more than `maxAttempts` times with
 * no new checkpoint, its stored state unreadable, its entity unknown) ends in
 * ERROR saying which; so does one that reaches its deadline (its calls
 * aborted, what finished committed). A finish refused because a continue
 * arrived takes that continue's input in and runs on. Throws
 * `LeaseLostError` when another execution claimed the run meanwhile.
 */
export async function executeRun(
  resources: EngineResources,
  runId: string,
  options: ExecuteOptions,
): Promise<ExecutionResult> {
  const claim = await claimExecution(resources, runId, options);
  // The deadline's timer is armed from the row the claim returned: no read of its own. A member
  // run's deadline is its team's, which reaches it through its team's signal.
  const member = options.parentEpoch !== undefined;
  const execution = deadlineSignal(
    member ? { runId, deadlineAt: null } : claim.run,
    options.signal,
    resources.clock,
  );
  options.onClaim?.({ epoch: claim.epoch, run: claim.run, moveDeadline: execution.moveTo });
  // A suspend asked for before this claim (the run was queued, or its last worker died) stops it at its first boundary.
  if (!member) options.suspend?.set(claim.run.suspendRequest);
  try {
    return await executeClaimed(resources, claim, options, execution.signal);
  } finally {
    execution.stop();
  }
}

async function executeClaimed(
  resources: EngineResources,
  claim: Claim,
  options: ExecuteOptions,
  signal: AbortSignal,
): Promise<ExecutionResult> {
  const { run } = claim;
  const { runId } = run;
  const { checkpointer, storedMessages } = await openExecution(resources, claim, options);
  // An execution that cannot run at all leaves a waiting continue's input for the next continue.
  const keeps = claim.continueRequest
    ? { continueRequest: claim.continueRequest.requestId }
    : undefined;

  // The wait this pickup carries (its parks) is reported by the tree's first permit only.
  const carriedWait = options.carriedWait ?? { ms: options.capacityWaitedMs ?? 0 };
  let state: TurnLoopState;
  try {
    const spend = options.spend ?? treeSpendOf(claim);
    // A root's execution holds its tree to its tenant's day budget too (members share the root's).
    if (!options.spend) spend.tenant = tenantHoldOf(resources, run);
    checkAttemptsCap(claim, resources.limits.maxAttempts);
    const messages = parseStoredMessages(runId, storedMessages);
    state = turnLoopStateFor(resources, claim, checkpointer, {
      entity: options.member ?? registryOf(resources).get(run.entity),
      messages,
      runMember: memberRunner(resources, executeRun, run, { ...options, carriedWait, spend }),
      signal,
      handover: options.handover,
      suspend: options.suspend,
      context: options.context,
      carriedWait,
      spend,
      budgetStop: budgetStopOf,
    });
    if (claim.continueRequest) takeIn(state, claim.continueRequest);
    // Claimed at or past its deadline (or cancelled meanwhile): nothing runs.
    signal.throwIfAborted();
  } catch (error) {
    const ending = endingOfError(
      await attemptsSuspended(resources, claim, checkpointer, error),
      signal,
      [],
    );
    return finished(await writeEnding(checkpointer, ending, run.usage, keeps));
  }

  for (;;) {
    let ending: RunEnding;
    try {
      const result = await runTurnLoop(state);
      // The next execution announces itself with RunContinued (reason `handover`).
      if (result.kind === 'handover') return { outcome: 'handed-over', runId };
      ending = answeredEnding(result.content, state.usage);
    } catch (error) {
      if (error instanceof HandoverSignal) return { outcome: 'handed-over', runId };
      if (error instanceof CapacityParkSignal) return parked(checkpointer, state, error);
      ending = endingOfError(await suspendedNow(state, signal, error), signal, state.messages);
    }
    try {
      return finished(await writeEnding(checkpointer, ending, state.usage));
    } catch (error) {
      if (!(error instanceof ContinueArrivedError)) throw error;
      // Stopped at its deadline: nothing more runs here, so the continue's input waits for the next continue.
      if (ending.status === 'ERROR' && signal.aborted) {
        const kept = { continueRequest: error.requestId };
        return finished(await writeEnding(checkpointer, ending, state.usage, kept));
      }
      // A continue arrived while this execution ran: answer its input too, then finish.
      const request = await resources.store.readContinueRequest(runId, error.requestId);
      if (request) takeIn(state, request);
    }
  }
}

/**
 * Under `CAIRN_ON_ATTEMPTS_EXHAUSTED=suspend`, a run that used up its
 * attempts waits suspended (reason `attempts_exhausted`) instead of ending in
 * ERROR: the signal of that pause in place of the error; any other error as is.
 */
async function attemptsSuspended(
  resources: EngineResources,
  claim: Claim,
  checkpointer: Checkpointer,
  error: unknown,
): Promise<unknown> {
  if (!(error instanceof AttemptsExhaustedError)) return error;
  if (resources.limits.onAttemptsExhausted !== 'suspend') return error;
  const { run, epoch } = claim;
  const memberPath = () => memberPathOf(resources.store, run);
  return suspendSignal(
    { runId: run.runId, epoch, checkpointer, memberPath },
    0,
    'attempts_exhausted',
  );
}

/**
 * A suspend with `now` that names this run aborted its calls: it waits PAUSED
 * at its last checkpoint with a `suspended` action (the signal of that pause in
 * place of the error); the calls it aborted run again on resume.
 */
async function suspendedNow(
  state: TurnLoopState,
  signal: AbortSignal,
  error: unknown,
): Promise<unknown> {
  const reason: unknown = signal.reason;
  if (!signal.aborted || !(reason instanceof SuspendRequestedError)) return error;
  if (reason.targetRunId !== state.runId || error instanceof PauseSignal) return error;
  return suspendSignal(state, batchesOf(state.messages), 'operator', true);
}

/** The registry of an engine that executes runs. */
export function registryOf(resources: EngineResources): Registry {
  if (!resources.registry) throw new UserError('engine: executing a run needs a registry');
  return resources.registry;
}

/**
 * Parks the run for model capacity (its own model turn, or a member's, got
 * no permit within the wait): one fenced write keeps it RUNNING at what it
 * committed, ends the attempt and records what it waits for; the queue
 * delays its job until the limit expects room.
 */
async function parked(
  checkpointer: Checkpointer,
  state: TurnLoopState,
  signal: CapacityParkSignal,
): Promise<ExecutionResult> {
  const { model, retryAfterMs, waitedMs, waiter } = signal;
  const until = new Date(state.clock.now().getTime() + retryAfterMs).toISOString();
  await checkpointer.park(state.usage, { for: 'capacity', model, until }, { waitedMs });
  return { outcome: 'parked', runId: state.runId, park: { model, retryAfterMs, waitedMs, waiter } };
}

function finished(run: RunRecord): ExecutionResult {
  return { outcome: 'finished', run };
}

/**
 * A root run's tree spend: its budget (raised by approved budget actions)
 * and what its tree has spent, which the claim read for a run with a budget
 * (a run without one checks nothing).
 */
function treeSpendOf(claim: Claim): TreeSpend {
  const { run, treeUsage } = claim;
  if (!run.budget) return TreeSpend.of(undefined, run.usage);
  return TreeSpend.of(run.budget, sumUsage(treeUsage ?? [run.usage]));
}

/**
 * The tenant's day budget a root run's tree is held to, with the day a
 * person let it go on past it; undefined when its tenant has none.
 */
function tenantHoldOf(resources: EngineResources, run: RunRecord): TenantHold | undefined {
  const maxMicroUsd = tenantBudgetOf(resources.tenantBudgets, run.tenantId);
  if (maxMicroUsd === undefined || !resources.tenantSpend || run.tenantId === null)
    return undefined;
  return {
    tenantId: run.tenantId,
    maxMicroUsd,
    ledger: resources.tenantSpend,
    exemptDay: run.tenantBudgetExemptDay,
  };
}
