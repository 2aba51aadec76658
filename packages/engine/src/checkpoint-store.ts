import type { NewPendingAction, PendingActionRecord } from './hitl/pending-action.js';
import type { FinishStatus, RunStatus } from './lifecycle/run-status.js';
import type { RunEvent } from './events.js';
import type { Message, Usage } from './messages.js';
import type {
  AttemptReason,
  CreatedRun,
  NewRun,
  RunErrorInfo,
  RunRecord,
  ToolCallRecord,
} from './run-types.js';

/** What one checkpoint adds to a run: only the new rows, never the whole history. */
export interface CheckpointDelta {
  /** Messages appended at indices `lastCheckpointAtMessageIndex, ...`. */
  messages: readonly Message[];
  /** Tool call rows to insert, or to update when a row with that id already exists. */
  toolCalls: readonly ToolCallRecord[];
  /** The run's cumulative usage after this checkpoint. */
  usage: Usage;
  /** Events this delta covers, stored in the same statement, numbered after the run's last stored event. */
  events?: readonly RunEvent[];
}

/** What {@link CheckpointStore.claimRun} takes. */
export interface ClaimRequest {
  workerId: string;
  reason: AttemptReason;
  /** For a member run: the epoch of its team's execution. */
  parentEpoch?: number;
  /** Statuses the claim may start from. @defaultValue CLAIMABLE_STATUSES */
  from?: readonly RunStatus[];
}

/** The successful claim of a run. */
export interface Claim {
  /** The fencing token every later write of this execution must carry. */
  epoch: number;
  run: RunRecord;
}

/** A run's durable history up to its last checkpoint. */
export interface RunHistory {
  messages: Message[];
  toolCalls: ToolCallRecord[];
}

/** How an execution ends a run. */
export interface RunOutcome {
  status: FinishStatus;
  content: string | null;
  error: RunErrorInfo | null;
  /** Whatever the run has not committed yet. */
  delta: CheckpointDelta;
  /** For PAUSED: one pending action per gated call, committed with the delta (none for a team whose member paused). */
  pendingActions?: readonly NewPendingAction[];
}

/**
 * The persistence port the engine runs on. `@cairn/store` implements it on
 * Postgres; every write after `claimRun` is fenced by the epoch it returned.
 */
export interface CheckpointStore {
  /**
   * Creates a run in PENDING (its `messages`, if any, committed with it). With `idempotency`, a key seen
   * before returns its run (`replayed: true`) or, for another request, throws `IdempotencyKeyReusedError`;
   * a tenant naming another tenant's session gets `SessionNotFoundError`.
   */
  createRun(run: NewRun): Promise<CreatedRun>;
  /** The run, or undefined when there is none. */
  getRun(runId: string): Promise<RunRecord | undefined>;
  /**
   * Claims the run for one execution: one conditional UPDATE increments the
   * epoch and sets RUNNING when the status is one of `from` (default
   * `CLAIMABLE_STATUSES`), and an attempt row is recorded. Throws
   * `RunNotFoundError` or `RunNotContinuableError`; for a member run claimed
   * with `parentEpoch`, `LeaseLostError` when the parent has been claimed since.
   */
  claimRun(runId: string, claim: ClaimRequest): Promise<Claim>;
  /** Messages `[0, lastCheckpointAtMessageIndex)` and the tool calls committed with them. */
  loadHistory(runId: string): Promise<RunHistory>;
  /**
   * Appends the delta and advances `lastCheckpointAtMessageIndex`, status
   * RUNNING, in one transaction, only if `epoch` still holds the run;
   * otherwise throws `LeaseLostError` and writes nothing. Returns the new index.
   */
  commitCheckpoint(runId: string, epoch: number, delta: CheckpointDelta): Promise<number>;
  /** Commits the remaining delta and the final status, fenced like `commitCheckpoint`. */
  finishRun(runId: string, epoch: number, outcome: RunOutcome): Promise<RunRecord>;
  /**
   * The most recent member run of `parentRunId` for `memberName` whose result
   * no committed tool call of the parent holds yet: the delegation a crash
   * interrupted, to be continued (or, if COMPLETED, reused) instead of redone.
   */
  findUnconsumedChildRun(parentRunId: string, memberName: string): Promise<RunRecord | undefined>;
  /** Member runs of a run, oldest first. */
  listChildRuns(parentRunId: string): Promise<RunRecord[]>;
  /** Every pending action the run made (decided or not), oldest first: a resume reads its decisions here. */
  listRunActions(runId: string): Promise<PendingActionRecord[]>;
  /**
   * Claims a decided action for execution in one fenced write: true the first
   * time, false once any execution consumed it (the call must not run again);
   * `LeaseLostError` when `epoch` no longer holds the run.
   */
  consumeAction(runId: string, epoch: number, actionId: string): Promise<boolean>;
}
