import type { NewPendingAction, PendingActionRecord } from './hitl/pending-action.js';
import type { FinishStatus, RunStatus } from './lifecycle/run-status.js';
import type { RunEvent } from './events.js';
import type { Message, Usage } from './messages.js';
import type { TenantDaySpend } from './spend/tenant-budget.js';
import type {
  AttemptReason,
  CheckpointRecord,
  CreatedRun,
  ContinueRequestRecord,
  NewRun,
  RunErrorInfo,
  RunRecord,
  RunWaiting,
  SuspendRequest,
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
  /** The continue request whose input this delta's messages take in: marked applied by the same fenced write. */
  appliesContinueRequest?: string;
  /**
   * The waiting continue request an ERROR finish leaves waiting, not taken in: an execution that could not
   * run at all (its entity missing or changed) keeps the request's input for the continue that follows.
   */
  keepsContinueRequest?: string;
  /**
   * The run parks for model capacity with this write: it stays RUNNING, its attempt ends (`parked`)
   * and the run shows what it waits for until its next claim.
   */
  park?: RunWaiting;
}

/** What {@link CheckpointStore.claimRun} takes. */
export interface ClaimRequest {
  workerId: string;
  reason: AttemptReason;
  /** For a member run: the epoch of its team's execution. */
  parentEpoch?: number;
  /** Statuses the claim may start from. @defaultValue CLAIMABLE_STATUSES */
  from?: readonly RunStatus[];
  /** The definition hash of the entity this execution runs, recorded on the run by the claim. @defaultValue unchanged */
  definitionHash?: string;
}

/** The successful claim of a run. */
export interface Claim {
  /** The fencing token every later write of this execution must carry. */
  epoch: number;
  run: RunRecord;
  /** Claims since the run's last progress (its last committed message or continue request), this one included. */
  claimsSinceProgress: number;
  /** The continue request waiting to be applied, with its input, if any. */
  continueRequest: ContinueRequestRecord | null;
  /** For a run with a budget: the usage of every run of its tree, read by the claim (null without a budget). */
  treeUsage: Usage[] | null;
}

/** What an execution reads to see whether it still holds its run. */
export interface RunLease {
  epoch: number;
  status: RunStatus;
  cancelRequestedAt: Date | null;
  /** The suspend request recorded on the run (a root's), if any. */
  suspendRequest?: SuspendRequest | null;
  /** The run's deadline now (a continue may have moved it since the claim). */
  deadlineAt: Date | null;
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
   * before returns its run (`replayed: true`) or, for another request, throws `IdempotencyKeyReusedError`.
   * The run joins (or opens) its `tenantId`'s session of `sessionId`: sessions are per tenant.
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
  /** Messages `[from, to)` of the run's committed history (a fork's first ones read through its source). */
  readHistory(runId: string, range: { from: number; to: number }): Promise<Message[]>;
  /** Every committed checkpoint of the run's history, in order (a fork's begin with its source's up to its point). */
  listCheckpoints(runId: string): Promise<CheckpointRecord[]>;
  /** The number (1-based) of the run's committed checkpoint that ends at `messageIndex`; undefined: none does. */
  checkpointEndingAt(runId: string, messageIndex: number): Promise<number | undefined>;
  /**
   * Appends the delta and advances `lastCheckpointAtMessageIndex`, status
   * RUNNING, in one transaction, only if `epoch` still holds the run;
   * otherwise throws `LeaseLostError` and writes nothing. Returns the new index.
   */
  commitCheckpoint(runId: string, epoch: number, delta: CheckpointDelta): Promise<number>;
  /**
   * Commits the remaining delta and the final status, fenced like
   * `commitCheckpoint`. A COMPLETED or ERROR finish is refused with
   * `ContinueArrivedError` while a continue request waits that the delta does
   * not apply: the execution takes its input in and goes on.
   */
  finishRun(runId: string, epoch: number, outcome: RunOutcome): Promise<RunRecord>;
  /** The member run started by the team's tool call `toolCallId`, if any: one per delegation. */
  findMemberRun(parentRunId: string, toolCallId: string): Promise<RunRecord | undefined>;
  /**
   * Stores a continue request (with its input) in the same statement that
   * checks the run is in one of `statuses` and that no other request waits,
   * with `deadlineMs` setting the run's new deadline that many ms from now;
   * an `upgrade` or a `deadlineMs` without input while one waits is merged into that one.
   */
  recordContinueRequest(
    runId: string,
    request: {
      input: string | null;
      upgrade?: boolean;
      statuses: readonly RunStatus[];
      deadlineMs?: number;
    },
  ): Promise<
    | { recorded: true; request: ContinueRequestRecord }
    | { recorded: false; reason: 'waiting' | 'status' | 'not-found' }
  >;
  /**
   * Moves the run's deadline to `deadlineMs` from now (the store's clock), in one statement that
   * checks it is in one of `statuses`; false when it is not (or there is no such run).
   */
  moveDeadline(
    runId: string,
    request: { deadlineMs: number; statuses: readonly RunStatus[] },
  ): Promise<boolean>;
  /** The waiting continue request `requestId` of the run, if it still waits. */
  readContinueRequest(runId: string, requestId: string): Promise<ContinueRequestRecord | null>;
  /**
   * Records that a worker left the run for one with its entity or definition: the wait starts now unless
   * one started since the run last changed (a claim, checkpoint, decision or continue request). Returns how
   * long it has waited (ms, 0 the first time), or undefined when there is no such run. The version grace
   * period counts from it.
   */
  awaitDeploy(runId: string): Promise<number | undefined>;
  /** The run's epoch, status, cancel request and deadline (one indexed read), or undefined. */
  readLease(runId: string): Promise<RunLease | undefined>;
  /**
   * Cancels a run nobody executes (queued, or its worker dead): CANCELLED,
   * epoch + 1, open attempts and `running` tool rows closed, cascading to
   * member runs. `onlyIfEpoch`: only while that epoch still holds the run.
   */
  forceCancel(runId: string, options?: { onlyIfEpoch?: number }): Promise<RunRecord | undefined>;
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
  /**
   * The tenant's spend on the current UTC day (by the store's clock), as the commits of its runs
   * counted it fleet-wide, and the seconds until the next UTC day: one read.
   */
  tenantDaySpend(tenantId: string): Promise<TenantDaySpend>;
}
