import type { NewPendingAction, PendingActionRecord } from '../hitl/pending-action.js';
import { suspendedAction } from '../suspension.js';
import type { RunRecord } from '../run-types.js';
import type { DecisionStore } from '../run-control-store.js';
import { RunNotContinuableError, RunNotFoundError } from '../errors.js';
import { decideAndResume } from './decide-actions.js';
import type { JobPort } from './intents.js';
import { RUN_TRANSITIONS, type RunStatus } from './run-status.js';

/**
 * How a suspend of a run in each status is carried out: `at-once` (no worker executes it: a
 * queued or paused run is PAUSED with its `suspended` action in one fenced write, the `suspend`
 * transition), `at-boundary` (a RUNNING run: the request is recorded on its tree's root, and the
 * execution pauses it at its next checkpoint boundary, the `pause` transition), `refused` (a
 * finished run: 409).
 */
export const SUSPEND_MOVE_BY_STATUS = {
  PENDING: 'at-once',
  PAUSED: 'at-once',
  RUNNING: 'at-boundary',
  COMPLETED: 'refused',
  ERROR: 'refused',
  CANCELLED: 'refused',
} as const satisfies Record<RunStatus, 'at-once' | 'at-boundary' | 'refused'>;

/** The statuses {@link SUSPEND_MOVE_BY_STATUS} suspends at once: those of the `suspend` transition. */
const SUSPEND_AT_ONCE_STATUSES: readonly RunStatus[] = RUN_TRANSITIONS.suspend.from;

/**
 * The move of a suspend of a run in `status` whose tree's root is in
 * `rootStatus` ({@link SUSPEND_MOVE_BY_STATUS}), and whether the root moves
 * with it (`idle`: no execution holds the tree, so the root is PAUSED, epoch +
 * 1). A member run not started yet while its team runs is its team's
 * execution's to stop, at the member's boundary.
 */
export function suspendMoveOf(
  status: RunStatus,
  rootStatus: RunStatus,
): { move: 'at-once' | 'at-boundary' | 'refused'; idle: boolean } {
  const idle = SUSPEND_AT_ONCE_STATUSES.includes(rootStatus);
  if (status === 'PENDING' && !idle) return { move: 'at-boundary', idle };
  return { move: SUSPEND_MOVE_BY_STATUS[status], idle };
}

/** What a suspend did: `suspended` at once (its action), `requested` (the run stops at its next boundary), `already` (a `suspended` action waits already). */
export type SuspendOutcome =
  | { kind: 'suspended'; run: RunRecord; actionId: string; removeJob: boolean }
  | { kind: 'requested'; run: RunRecord }
  | { kind: 'already'; run: RunRecord; actionId: string };

/** The store's part of a suspend and a resume. */
export interface SuspendStore extends Pick<DecisionStore, 'decideActions'> {
  /**
   * In one transaction under the tree root's row lock: judges the run's status by
   * {@link SUSPEND_MOVE_BY_STATUS}; `at-once` writes the `suspend` transition (PAUSED, epoch + 1)
   * with the action `action(epoch, memberPath)` makes and `RunSuspended`; `at-boundary` records the
   * request on the root; a `suspended` action that waits already is `already`. Throws
   * `RunNotFoundError`, or `RunAlreadyTerminalError` for `refused`.
   */
  suspendRun(
    runId: string,
    request: {
      now: boolean;
      action(epoch: number, memberPath: string[]): NewPendingAction;
    },
  ): Promise<SuspendOutcome>;
  /** The `suspended` actions of `runId`'s tree, newest first (any status); throws `RunNotFoundError`. */
  listSuspendedActions(runId: string): Promise<PendingActionRecord[]>;
  /** The run, or undefined when there is none. */
  getRun(runId: string): Promise<RunRecord | undefined>;
}

/** What {@link suspendRun} and {@link resumeRun} run on. */
export interface SuspendDeps {
  store: SuspendStore;
  jobs: JobPort;
  /** Makes a new action id. */
  newActionId(): string;
}

/**
 * The `suspend` move, as an operator asks for it: a queued or paused run is
 * suspended at once (a queued run's job removed), a running one at its next
 * checkpoint boundary by the execution holding it (with `now`, its calls in
 * flight aborted); a finished run is refused. Returns what it did.
 */
export async function suspendRun(
  deps: SuspendDeps,
  runId: string,
  options: { now?: boolean } = {},
): Promise<SuspendOutcome> {
  const now = options.now ?? false;
  const outcome = await deps.store.suspendRun(runId, {
    now,
    action: (epoch, memberPath) =>
      suspendedAction(deps.newActionId(), memberPath, epoch, 0, 'operator', now),
  });
  if (outcome.kind === 'suspended' && outcome.removeJob) {
    const live = await deps.jobs.liveJobOf(outcome.run.runId);
    if (live && !live.active)
      await deps.jobs.carryOut([
        { kind: 'remove-job', runId: outcome.run.runId, jobId: live.jobId, cause: 'suspended' },
      ]);
  }
  return outcome;
}

/** What a resume did: `resumed` (this call decided the `suspended` action), `already` (it was decided before: a no-op). */
export interface ResumeOutcome {
  kind: 'resumed' | 'already';
  actionId: string;
  /** The run as it is after the resume (PAUSED until a worker claims it, unless other actions keep it so). */
  run: RunRecord;
}

/**
 * The resume of a suspended run: approves the `suspended` action waiting in
 * its tree (the `decide` move, compare and set), and enqueues the resume it
 * asks for (job id from the root run and the epoch it paused in). A resume
 * of a run whose suspension was decided before is a no-op (`already`), also
 * once the run went on or finished. Throws `RunNotFoundError`, or
 * `RunNotContinuableError` (409) when no suspension of the tree was ever
 * decided nor waits (never suspended, or cancelled while suspended).
 */
export async function resumeRun(deps: SuspendDeps, runId: string): Promise<ResumeOutcome> {
  const suspended = await deps.store.listSuspendedActions(runId);
  const waiting = suspended.find((a) => a.status === 'pending');
  if (!waiting) {
    // Its suspension decided before: the same resume again is a no-op, at any time (as a decision is).
    const decided = suspended.find((a) => a.status === 'decided');
    const run = await runOf(deps.store, runId);
    if (!decided)
      throw new RunNotContinuableError(runId, run.status, 'not suspended: nothing to resume');
    return { kind: 'already', actionId: decided.actionId, run };
  }
  const { result, intents } = await decideAndResume(
    deps.store,
    runId,
    [{ actionId: waiting.actionId, decision: { type: 'approve' } }],
    () => undefined,
  );
  await deps.jobs.carryOut(intents);
  return {
    kind: result.applied.length > 0 ? 'resumed' : 'already',
    actionId: waiting.actionId,
    run: await runOf(deps.store, runId),
  };
}

async function runOf(store: Pick<SuspendStore, 'getRun'>, runId: string): Promise<RunRecord> {
  const run = await store.getRun(runId);
  if (!run) throw new RunNotFoundError(runId);
  return run;
}
