/**
 * The store's primitives for the lifecycle's moves outside an execution
 * (decide, expire, cancel, recover), beside the execution's
 * `CheckpointStore`. Each is a compare-and-set or a read: which move
 * to make is the lifecycle's (`lifecycle/`), which runs them and returns
 * what needs the queue as intents.
 */
import type {
  ActionDecision,
  DecisionsResult,
  PendingActionRecord,
  PostedDecision,
  TreeResume,
} from './hitl/pending-action.js';
import type { RunStatus } from './lifecycle/run-status.js';
import type { RunErrorInfo, RunRecord } from './run-types.js';

/** Checks a decision against its action before it is recorded (the tool's schema for edited args); throws to refuse. */
export type DecisionValidator = (action: PendingActionRecord, decision: ActionDecision) => void;

/** What the store's `expireAction` did. */
export type ExpiryOutcome =
  /** The action was decided, cancelled or expired already, or is not due yet: nothing written. */
  | { kind: 'unchanged' }
  /** `onTimeout: 'reject'`: decided as rejected ("approval timed out"); `resume` when it was the tree's last. */
  | { kind: 'rejected'; resume?: TreeResume }
  /** `onTimeout: 'error'`: the tree's paused runs ended in ERROR, its other actions cancelled. */
  | { kind: 'errored'; runIds: string[] };

/** Where a paged scan of runs by `(updated_at, run_id)` left off. */
export interface RunCursor {
  updatedAt: Date;
  runId: string;
}

/** The human-in-the-loop primitives: decisions and expiries by compare-and-set, in one transaction each. */
export interface DecisionStore {
  /**
   * Records decisions for actions of `runId`'s tree, all or nothing, each
   * judged by the lifecycle's `judgeDecision`; `resume` is set when this call
   * decided the tree's last pending action and the lifecycle's `resumeWhenDecided` resumes it.
   */
  decideActions(
    runId: string,
    decisions: readonly PostedDecision[],
    validate: DecisionValidator,
  ): Promise<DecisionsResult>;
  /** Expires an undecided action past its `expires_at` as the lifecycle's `expiryMoveOf` says. */
  expireAction(actionId: string): Promise<ExpiryOutcome>;
  /** The undecided actions of the run's tree (a team lists its members'). */
  listPendingActions(runId: string): Promise<PendingActionRecord[]>;
}

/** The cancel primitives: a mark for the worker holding the run, and a fenced cancel of a run nobody executes. */
export interface CancelStore {
  /** The run, or undefined when there is none. */
  getRun(runId: string): Promise<RunRecord | undefined>;
  /** Sets `cancel_requested_at` for the worker holding the run to see; throws `RunNotFoundError` or `RunAlreadyTerminalError`. */
  requestCancel(runId: string): Promise<RunRecord>;
  /**
   * Cancels a run nobody executes: CANCELLED, epoch + 1, cascading to member
   * runs; undefined when its status (or, with `onlyIfEpoch`, its epoch) moved on.
   */
  forceCancel(runId: string, options?: { onlyIfEpoch?: number }): Promise<RunRecord | undefined>;
}

/** The reads recovery looks for runs without a job with, and the expiry it applies to overdue actions. */
export interface RecoveryStore extends Pick<DecisionStore, 'expireAction'> {
  /** Runs in one of `statuses`, not updated for `olderThanMs`, least recently updated first, after `after`. */
  listRunsByStatus(
    statuses: readonly RunStatus[],
    olderThanMs?: number,
    options?: { topLevelOnly?: boolean; limit?: number; after?: RunCursor },
  ): Promise<RunRecord[]>;
  /** Runs in one of `statuses` whose continue request waits, not updated for `olderThanMs`. */
  listRunsWithWaitingContinue(
    statuses: readonly RunStatus[],
    olderThanMs: number,
    limit?: number,
  ): Promise<RunRecord[]>;
  /** The resumes of paused top-level runs with every action decided, paused at least `olderThanMs` ago. */
  listResumablePausedRuns(olderThanMs: number, limit?: number): Promise<TreeResume[]>;
  /** Ids of undecided actions whose `expires_at` passed at least `graceMs` ago, oldest first. */
  listOverdueActions(graceMs: number, limit: number): Promise<string[]>;
  /** Top-level runs in one of `statuses` whose deadline passed at least `graceMs` ago, earliest deadline first. */
  listRunsPastDeadline(
    statuses: readonly RunStatus[],
    graceMs: number,
    limit: number,
  ): Promise<RunPastDeadline[]>;
  /**
   * Ends a run past its deadline that no execution ended, with its member runs in `statuses`, in
   * one transaction: ERROR with `errorOf(run)`, epoch + 1 (a live execution's later writes lose),
   * open attempts and `running` tool rows closed, a `RunError` stored on each. Fenced: only while
   * the run is in one of `statuses` with `epoch`. Returns the ended runs (the run first), or
   * undefined when its status or epoch moved on.
   */
  endPastDeadline(
    runId: string,
    fence: {
      epoch: number;
      statuses: readonly RunStatus[];
      errorOf(run: { runId: string; deadlineAt: Date }): RunErrorInfo;
    },
  ): Promise<string[] | undefined>;
}

/** What a pass run by one process at a time returns: `locked: false` when another process was running it (nothing ran). */
export type ExclusiveResult<T> = { locked: true; result: T } | { locked: false };

/** The reconciler's port: recovery's reads and moves, and the lock that lets one process of the fleet reconcile at a time. */
export interface RecoveryPort extends RecoveryStore {
  /** Runs `work` while this process holds the fleet's reconciler lock; `{ locked: false }` at once when another holds it. */
  whileReconciling<T>(work: () => Promise<T>): Promise<ExclusiveResult<T>>;
}

/** A run the reconciler found past its deadline. */
export interface RunPastDeadline {
  runId: string;
  /** The epoch it was read at: the end is fenced on it. */
  epoch: number;
  deadlineAt: Date;
}
