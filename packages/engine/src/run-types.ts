import type { Budget } from './spend/budget-option.js';
import type { RunStatus } from './lifecycle/run-status.js';
import type { Message, Usage } from './messages.js';

/** When a run persists its progress. */
export const CHECKPOINT_MODES = ['run', 'tool-batch', 'tool-call'] as const;
/**
 * `run`: terminal states only; `tool-batch`: after every completed tool batch;
 * `tool-call`: also each tool call as it starts and finishes.
 */
export type CheckpointMode = (typeof CHECKPOINT_MODES)[number];

/** The kinds of entity a registry holds. */
export const ENTITY_KINDS = ['agent', 'team'] as const;
/** `agent` or `team`. */
export type EntityKind = (typeof ENTITY_KINDS)[number];

/** Names the agent or team a run executes. */
export interface EntityRef {
  kind: EntityKind;
  name: string;
}

/**
 * Why an execution claims a run: `run` (first execution), `continue` (asked
 * for), `recovered` (its previous worker stalled), `reconciled` (found with no
 * live job), `handover` (its previous worker shut down gracefully), `capacity`
 * (picked up again after parking for model capacity; never counted toward
 * `CAIRN_MAX_ATTEMPTS`).
 */
export const ATTEMPT_REASONS = [
  'run',
  'continue',
  'recovered',
  'reconciled',
  'handover',
  'capacity',
] as const;

/** One of {@link ATTEMPT_REASONS}. */
export type AttemptReason = (typeof ATTEMPT_REASONS)[number];

/**
 * The reasons a `continue` job carries for its claim (`run` is the `run`
 * job's own; `capacity` is known from the job's park, not carried).
 */
export const CONTINUE_JOB_REASONS = [
  'continue',
  'recovered',
  'reconciled',
  'handover',
] as const satisfies readonly AttemptReason[];

/** One of {@link CONTINUE_JOB_REASONS}. */
export type ContinueJobReason = (typeof CONTINUE_JOB_REASONS)[number];

/** What a RUNNING run that holds no worker waits for: a model's capacity (it parked, its job delayed until `until`). */
export interface RunWaiting {
  for: 'capacity';
  /** The model (`Model.name`) whose limit it waits on. */
  model: string;
  /** When its job is due again (ISO 8601). */
  until: string;
}

/** A continue asked for, stored with its input until an execution applies it. */
export interface ContinueRequestRecord {
  requestId: string;
  /** The new user message, or null for a continue without input. */
  input: string | null;
  /** Resume the run on the worker's definition of its entity even when it differs from the run's (`continue { upgrade: true }`). */
  upgrade: boolean;
  requestedAt: Date;
}

/** The error a run ended with. */
export interface RunErrorInfo {
  name: string;
  message: string;
  /** True when a continue may succeed (every ERROR is continuable; this hints whether retrying helps). */
  retryable?: boolean;
}

/** An operator's suspend of a running run, recorded on its tree's root until an execution of `runId` reaches a checkpoint boundary. */
export interface SuspendRequest {
  /** The run to suspend: the root, or a member run of its tree. */
  runId: string;
  /** Abort the calls in flight (through `ctx.signal`) instead of letting the batch finish. */
  now: boolean;
}

/** A run as the engine sees it. */
export interface RunRecord {
  runId: string;
  sessionId: string;
  userId: string | null;
  parentRunId: string | null;
  /** For a member run: the team's tool call that started it. */
  parentToolCallId: string | null;
  entity: EntityRef;
  status: RunStatus;
  input: string;
  content: string | null;
  checkpoint: CheckpointMode;
  /** Number of messages durably committed: messages `[0, index)` survive a crash. */
  lastCheckpointAtMessageIndex: number;
  /** Fencing token: incremented by every claim. */
  epoch: number;
  error: RunErrorInfo | null;
  usage: Usage;
  metadata: Record<string, unknown>;
  /** When a cancel was asked for, if it was. */
  cancelRequestedAt: Date | null;
  /**
   * A root run's suspend request waiting for a checkpoint boundary of the run it names (the root or
   * one of its members; see `lifecycle/suspend-run.ts`); null or absent: none.
   */
  suspendRequest?: SuspendRequest | null;
  /** The tenant the run belongs to (that of its session); null: an admin key's. */
  tenantId: string | null;
  /** The continue request waiting to be applied, if any. */
  waitingContinueRequestId: string | null;
  /** The digest of the entity's definition the run was created (or last resumed) on; null until a worker stamps it. */
  definitionHash: string | null;
  /** A fork's source and point, as stored at its creation; null: not a fork. */
  forkedFrom: ForkedFrom | null;
  /** 1 (highest) to 10: orders the tenant's own runs, in the queue and waiting for a model's permits (tenants share both by weight). */
  priority: number;
  /** Set while the run is parked for model capacity (RUNNING, no worker holds it); null otherwise. */
  waiting: RunWaiting | null;
  /** What the run's tree may spend (a root run's; a member run is held to its root's); null: no budget. */
  budget: Budget | null;
  /** The UTC day (`YYYY-MM-DD`) a person let this root run's tree go on past its tenant's spent day budget; null: none. */
  tenantBudgetExemptDay: string | null;
  /**
   * When the run must have ended: at this time its execution aborts its model and tool calls and ends
   * it in ERROR (`DeadlineExceededError`). A member run's is its team's. Null: no deadline.
   */
  deadlineAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

/** A run as {@link NewRun} made it: `replayed` when an earlier request with the same idempotency key created it. */
export interface CreatedRun extends RunRecord {
  replayed: boolean;
}

/** Makes a run creation idempotent: the first request with `key` in `scope` creates the run, the same request again gets it back. */
export interface IdempotencyClaim {
  /** The tenant, or '' for admin keys: each tenant has its own keys. */
  scope: string;
  key: string;
  /** Digest of the request: the same key with another request is refused (`IdempotencyKeyReusedError`). */
  requestDigest: string;
}

/** Status of one tool call row. */
export type ToolCallStatus = 'running' | 'completed' | 'error';

/** One tool call of a run, stored as its own row. */
export interface ToolCallRecord {
  toolCallId: string;
  name: string;
  /** Parsed arguments, or the raw text when it was not valid JSON. */
  args: unknown;
  result: string | null;
  status: ToolCallStatus;
  /** 1-based number of the tool batch (model turn with tool calls) the call belongs to. */
  batch: number;
  /** Stable across re-executions of the same call. */
  idempotencyKey: string;
  /** For a delegation: the member run it started. */
  childRunId: string | null;
  startedAt: Date;
  endedAt: Date | null;
}

/** Where a fork's history came from: its source run and the point it was forked at. */
export interface ForkedFrom {
  run_id: string;
  /** The checkpoint's number (1-based) in the source's history. */
  checkpoint: number;
  /** How many of the source's messages the fork's history holds. */
  message_index: number;
}

/** One committed checkpoint of a run's history: a write that stored messages (a batch, a turn, a pause, a finish). */
export interface CheckpointRecord {
  /** 1-based number of the checkpoint in the run's history (a fork's include its source's up to its point). */
  seq: number;
  /** How many messages the history holds at this checkpoint. */
  messageIndex: number;
  at: Date;
  /** The epoch of the execution that wrote it (0: the run's creation). */
  epoch: number;
}

/** The data needed to create a run. */
export interface NewRun {
  runId?: string;
  sessionId?: string;
  userId?: string | null;
  parentRunId?: string | null;
  parentToolCallId?: string | null;
  /**
   * For a member run: the epoch of the parent's execution creating it. When the
   * parent has been claimed since, nothing is created (`LeaseLostError`).
   */
  parentEpoch?: number;
  entity: EntityRef;
  input: string;
  checkpoint: CheckpointMode;
  metadata?: Record<string, unknown>;
  /** The digest of the entity's definition the run is created on; null or absent: stamped by its first claim. */
  definitionHash?: string | null;
  /**
   * A starting history, committed with the run: a fork's own first messages (its input), at indices
   * after the history it shares ({@link NewRun.sharedHistory}).
   */
  messages?: Message[];
  /**
   * A fork's history up to its point: the first `length` messages of run `runId`'s history, shared
   * (read through the source, never copied), so a fork writes none of them.
   */
  sharedHistory?: { runId: string; length: number };
  /** What a fork was forked from, as its run view shows it. */
  forkedFrom?: ForkedFrom;
  /**
   * The tenant creating the run, whose session of `sessionId` it joins (sessions are per tenant: another
   * tenant's of the same id is another session); null or absent: no tenant (an admin key). A member run
   * or fork passes its parent's or source's.
   */
  tenantId?: string | null;
  idempotency?: IdempotencyClaim;
  /** 1 (highest) to 10. A member run passes its team's. @defaultValue 5 */
  priority?: number;
  /** What the run's tree may spend; absent: no budget. */
  budget?: Budget;
  /** The run must end within this many ms of its creation (counted by the store's clock, from `created_at`). */
  deadlineMs?: number;
  /** The run must end by this time: a member run passes its team's deadline. Ignored with `deadlineMs`. */
  deadlineAt?: Date | null;
}
