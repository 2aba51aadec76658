import type { Entity } from '../registry.js';
import type { CarriedWait } from '../capacity/model-gate.js';
import type { ParkedWaiter } from '../capacity/capacity-park-signal.js';
import type { TreeSpend } from '../spend/budget.js';
import type { AttemptReason, RunRecord } from '../run-types.js';
import type { RunStatus } from './run-status.js';
import type { SuspendSwitch } from '../suspension.js';

/** How an execution ended. `handed-over`: stopped at a checkpoint for another worker to resume. */
export type ExecutionResult =
  | { outcome: 'finished'; run: RunRecord }
  | { outcome: 'handed-over'; runId: string }
  /** Parked for model capacity at its last checkpoint: RUNNING, its job due again in `retryAfterMs`. */
  | { outcome: 'parked'; runId: string; park: CapacityPark };

/** A park for model capacity, as the queue carries it out. */
export interface CapacityPark {
  model: string;
  /** When the limit expects room, in ms from now: the job's delay. */
  retryAfterMs: number;
  /** How long the run has waited for its permit so far, across parks. */
  waitedMs: number;
  /** Who waits in the model's line: the queue asks for it before the run's next pickup claims it. */
  waiter: ParkedWaiter;
}

/** Options of one execution of a run. */
export interface ExecuteOptions {
  /** Why this execution claims the run; recorded in its attempt. */
  reason: AttemptReason;
  /**
   * Aborting it cancels the run (CANCELLED is persisted), unless its reason is
   * a `LeaseLostError`: then the execution stops and writes nothing more.
   */
  signal?: AbortSignal;
  /** Aborting it asks the execution to stop at its next checkpoint and hand the run back. */
  handover?: AbortSignal;
  /** The suspend requests of the execution's tree (its root's pickup makes it; member runs share it). */
  suspend?: SuspendSwitch;
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
  /** How long the run had waited for a model permit before this execution (its job's earlier parks). @defaultValue 0 */
  capacityWaitedMs?: number;
  /**
   * For a member run: its tree's carried wait, shared so that only the first permit the tree
   * gets reports it (set by the team's execution from its own `capacityWaitedMs`).
   */
  carriedWait?: CarriedWait;
  /** For a member run: its tree's spend, shared with the team (whose root's budget it is held to). */
  spend?: TreeSpend;
  /**
   * Called once the run is claimed, with the epoch this execution holds and how to move the
   * deadline it runs under (a continue's `deadline_ms` while it runs).
   */
  onClaim?(claim: {
    epoch: number;
    run: RunRecord;
    moveDeadline(deadlineAt: Date | null): void;
  }): void;
}
