/**
 * The run lifecycle's one definition: every status, every transition, and
 * the status sets other packages ask about. Nobody spells a status list
 * again: import these.
 */

/** Every status a run can be in. */
export const RUN_STATUSES = [
  'PENDING',
  'RUNNING',
  'COMPLETED',
  'ERROR',
  'CANCELLED',
  'PAUSED',
] as const;
/** A run's lifecycle status: `PENDING -> RUNNING -> COMPLETED | ERROR | CANCELLED | PAUSED`. */
export type RunStatus = (typeof RUN_STATUSES)[number];

/** One allowed move of a run: from any of `from` to `to`. */
export interface RunTransition {
  readonly from: readonly RunStatus[];
  readonly to: RunStatus;
}

/**
 * Every transition a run can make, by name. The store's conditional UPDATEs
 * take their `status in (...)` lists from here.
 */
export const RUN_TRANSITIONS = {
  /** A run is created: it waits for its first pickup. */
  create: { from: [], to: 'PENDING' },
  /** A pickup claims a run: a fresh one, one resumed after a crash, or one continued from ERROR. */
  claim: { from: ['PENDING', 'RUNNING', 'ERROR'], to: 'RUNNING' },
  /** A paused run resumes once its pending actions are decided: the only claim of a PAUSED run. */
  resumeFromPause: { from: ['PAUSED'], to: 'RUNNING' },
  /** A checkpoint keeps the run RUNNING and advances its message index. */
  checkpoint: { from: ['RUNNING'], to: 'RUNNING' },
  /** The model answered without tool calls. */
  complete: { from: ['RUNNING'], to: 'COMPLETED' },
  /** The run ended with an error (continuable by hand). */
  fail: { from: ['RUNNING'], to: 'ERROR' },
  /** The run waits for a person (or an operator's resume, at its checkpoint boundary after a suspend): it holds no worker and its job completes. */
  pause: { from: ['RUNNING'], to: 'PAUSED' },
  /**
   * An operator suspends a run no worker executes, at once (`lifecycle/suspend-run.ts`): a queued
   * run (its job removed) or a paused one (its `suspended` action beside the others); the epoch moves
   * on, so a job or resume queued before is refused by the claim. A RUNNING run is suspended by its
   * execution at its next checkpoint boundary (the `pause` transition).
   */
  suspend: { from: ['PENDING', 'PAUSED'], to: 'PAUSED' },
  /** Nobody decided an action with `onTimeout: 'error'` in time: the paused runs of its tree end in ERROR (continuable by hand). */
  approvalTimeout: { from: ['PAUSED'], to: 'ERROR' },
  /** Cancelled: queued, running or paused. */
  cancel: { from: ['PENDING', 'RUNNING', 'PAUSED'], to: 'CANCELLED' },
  /**
   * The run passed its deadline and no execution ended it (its worker died, none took its job in
   * time, or it waits PAUSED for a person): ended in ERROR (`DeadlineExceededError`) outside any
   * execution, with its live member runs, by a fenced write that moves the epoch on; undecided
   * actions are cancelled (continuable by hand with a new deadline).
   */
  deadline: { from: ['PENDING', 'RUNNING', 'PAUSED'], to: 'ERROR' },
} as const satisfies Record<string, RunTransition>;

/**
 * The status of a run an execution holds: every fenced write (checkpoint,
 * finish, a parent's delegation, consuming a decided action) requires it
 * together with the writer's epoch.
 */
export const EXECUTING_STATUS = RUN_TRANSITIONS.claim.to;

/** The name of one of {@link RUN_TRANSITIONS}. */
export type RunTransitionName = keyof typeof RUN_TRANSITIONS;

/** Statuses a plain pickup may claim (`claimRun`'s default). PAUSED is not among them. */
export const CLAIMABLE_STATUSES: readonly RunStatus[] = RUN_TRANSITIONS.claim.from;

/**
 * What a claim checks besides the run's status, in the claim's one
 * statement: `status-only`, or `tree-decided` (no action the run made, nor
 * any of its tree's when it is the root, waits for a person).
 */
export const CLAIM_CONDITIONS = ['status-only', 'tree-decided'] as const;
/** One of {@link CLAIM_CONDITIONS}. */
export type ClaimCondition = (typeof CLAIM_CONDITIONS)[number];

/**
 * The condition a claim from each status checks: a PAUSED run is claimed
 * (its `resumeFromPause`) only once nothing in its tree waits for a person.
 * The store's claim builds its WHERE from this table. COMPLETED and
 * CANCELLED are never a claim's `from`; listed so the table is total.
 */
export const CLAIM_CONDITION_BY_STATUS = {
  PENDING: 'status-only',
  RUNNING: 'status-only',
  ERROR: 'status-only',
  PAUSED: 'tree-decided',
  COMPLETED: 'status-only',
  CANCELLED: 'status-only',
} as const satisfies Record<RunStatus, ClaimCondition>;

/** Statuses a `run` job claims: its run was never finished. A `run` job that finds ERROR is a retry of a job whose run already ended. */
export const RUN_JOB_CLAIMABLE_STATUSES: readonly RunStatus[] = CLAIMABLE_STATUSES.filter(
  (s) => s !== 'ERROR',
);

/** Statuses in which a cancel request is accepted. */
export const CANCELLABLE_STATUSES: readonly RunStatus[] = RUN_TRANSITIONS.cancel.from;

/** Statuses a run never leaves without a continue by hand (or a fork): its event stream ends. */
export const FINAL_STATUSES: readonly RunStatus[] = ['COMPLETED', 'ERROR', 'CANCELLED'];

/**
 * Statuses in which the run is idle: no worker holds it or will pick it by
 * itself (the final ones and PAUSED, which a decision or a continue wakes).
 * `waitForRun` and a cancel's wait return on these.
 */
export const IDLE_STATUSES: readonly RunStatus[] = [...FINAL_STATUSES, 'PAUSED'];

/** Statuses of a run that should have a live job: the reconciler enqueues one when it has none. */
export const LIVE_STATUSES: readonly RunStatus[] = ['PENDING', 'RUNNING'];

/**
 * Finishes refused while a continue request waits that the finishing
 * execution did not apply: the execution takes the input in and goes on, so
 * a continue racing a completion is answered, not dropped.
 */
export const FINISH_WAITS_FOR_CONTINUE: readonly RunStatus[] = ['COMPLETED', 'ERROR'];

/** The statuses an execution's finish can write. */
export type FinishStatus = (typeof RUN_TRANSITIONS)['complete' | 'fail' | 'pause' | 'cancel']['to'];

/** The event that closes a finish into each status. */
export const FINISH_EVENT_TYPE = {
  COMPLETED: 'RunCompleted',
  ERROR: 'RunError',
  CANCELLED: 'RunCancelled',
  PAUSED: 'RunPaused',
} as const satisfies Record<FinishStatus, string>;

/** Event types after which a run's event stream ends (every finished run's stream holds exactly one). */
export const FINAL_EVENT_TYPES: readonly string[] = FINAL_STATUSES.map(
  (s) => FINISH_EVENT_TYPE[s as FinishStatus],
);

/** True when `transition` may start from `status`. */
export function canTransition(status: RunStatus, transition: RunTransitionName): boolean {
  return (RUN_TRANSITIONS[transition].from as readonly RunStatus[]).includes(status);
}

/** True when the status is one of `statuses` (a typed `includes` for the sets above). */
export function isStatusIn(status: RunStatus | undefined, statuses: readonly RunStatus[]): boolean {
  return status !== undefined && statuses.includes(status);
}
