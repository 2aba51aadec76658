/**
 * The producer API's wire shapes (docs/http-api.md), snake_case as the
 * server sends them. They are declared here rather than imported so that the
 * client carries no server package; `client-types.test.ts` checks at compile
 * time that they stay in step with the store's and the engine's types.
 */

/** A run's status. */
export type RunStatus = 'PENDING' | 'RUNNING' | 'COMPLETED' | 'ERROR' | 'CANCELLED' | 'PAUSED';

/** How often a run commits its progress. */
export type CheckpointMode = 'run' | 'tool-batch' | 'tool-call';

/** What a run executes. */
export interface EntityRef {
  kind: 'agent' | 'team';
  name: string;
}

/** One tool call requested by the model. */
export interface ToolCallRequest {
  id: string;
  name: string;
  /** Raw JSON text of the arguments. */
  arguments: string;
}

/** A message of a run's history. */
export type Message =
  | { role: 'user'; content: string }
  | { role: 'assistant'; content: string | null; toolCalls?: ToolCallRequest[] }
  | { role: 'tool'; toolCallId: string; name: string; content: string; isError?: boolean };

/** One model's usage in a run: tokens as the provider reported them, and their cost. */
export interface ModelUsage {
  input_tokens: number;
  /** Input tokens served from the provider's prompt cache (a part of `input_tokens`). */
  cached_input_tokens: number;
  output_tokens: number;
  /** USD at the workers' `CAIRN_MODEL_PRICES` (0 for a model with no price). */
  cost_usd: number;
}

/** Token usage and cost summed over a run's model responses (or its tree's), by model too. */
export interface Usage extends ModelUsage {
  total_tokens: number;
  by_model: Record<string, ModelUsage>;
}

/** Why a run ended in ERROR. */
export interface RunErrorInfo {
  name: string;
  message: string;
  retryable?: boolean;
}

/** One tool call of a run. */
export interface ToolCallView {
  tool_call_id: string;
  name: string;
  args: unknown;
  result: string | null;
  status: 'running' | 'completed' | 'error';
  batch: number;
  idempotency_key: string;
  child_run_id: string | null;
  started_at: string;
  ended_at: string | null;
}

/** One claim of a run by a worker. */
export interface AttemptView {
  epoch: number;
  worker_id: string;
  /** `run`, `continue`, `recovered`, `reconciled`, `handover` or `capacity` (picked up again after parking for model capacity). */
  reason: string;
  started_at: string;
  ended_at: string | null;
  outcome: string | null;
}

/** A tool call waiting for a person (human in the loop): approve, edit or reject it, or supply its result. */
export interface PendingActionView {
  action_id: string;
  /**
   * `budget`: the run's tree would pass its budget (`args.scope` `"run"`: approve with a raised
   * `budget`, or reject), or its tenant's day budget is spent (`"tenant"`, with `tenant` and `day`:
   * approve as is to let the run go on for the rest of that UTC day, or reject).
   */
  /** `suspended`: an operator suspended the run (or it used up its attempts); approve it, or `runs.resume`, to resume. */
  kind: 'approval' | 'external' | 'budget' | 'suspended';
  /** The run that made the call (the member run for a member's action). */
  run_id: string;
  member_path: string[];
  tool_call_id: string;
  tool: string;
  args: unknown;
  /** Send it back with a decision to refuse the decision if the call changed meanwhile (412). */
  args_digest: string;
  status: string;
  expires_at: string | null;
  decided_at: string | null;
  created_at: string;
}

/** A run as `GET /v1/runs/:run_id` returns it. */
export interface RunView {
  run_id: string;
  session_id: string;
  user_id: string | null;
  parent_run_id: string | null;
  parent_tool_call_id: string | null;
  entity: EntityRef;
  status: RunStatus;
  input: string;
  content: string | null;
  checkpoint: CheckpointMode;
  last_checkpoint_at_message_index: number;
  epoch: number;
  messages: Message[];
  tools: ToolCallView[];
  member_runs: RunView[];
  attempts: AttemptView[];
  /** Undecided actions of this run and of its member runs. */
  pending_actions: PendingActionView[];
  error: RunErrorInfo | null;
  /** What the run's own model responses used and cost. */
  usage: Usage;
  /** The same over the run's tree (a team with its member runs). */
  usage_total: Usage;
  /** What the run's tree may spend (raised by approved budget actions); null: no budget. */
  budget: {
    max_tokens: number | null;
    max_cost_usd: number | null;
    /** How long a budget pause waits for a decision; null: until decided. */
    decision_timeout_ms: number | null;
  } | null;
  metadata: Record<string, unknown>;
  cancel_requested_at: string | null;
  /** The digest of the entity's definition the run was created (or last resumed) on; null until a worker stamps it. */
  definition_hash: string | null;
  /** 1 (highest) to 10. */
  priority: number;
  /** While the run is parked for model capacity (RUNNING, no worker holds it): what it waits for and until when. */
  waiting: RunWaiting | null;
  /**
   * When the run must have ended (ISO 8601; a member run's is its team's); null: no deadline. A run
   * still going at its deadline ends in ERROR (`DeadlineExceededError`).
   */
  deadline_at: string | null;
  /** Every committed checkpoint of its history, in order: the points `runs.fork` can start from. */
  checkpoints: Checkpoint[];
  /** A fork's source run and the point it was forked at; null: not a fork. */
  forked_from: ForkedFrom | null;
  /** The runs forked from this one, oldest first. */
  forks: string[];
  created_at: string;
  updated_at: string;
}

/** One committed checkpoint of a run's history (a fork's begin with its source's up to its point). */
export interface Checkpoint {
  /** 1-based: `runs.fork(id, { at: { checkpoint: seq } })` forks here. */
  seq: number;
  /** How many messages the history holds at this checkpoint. */
  message_index: number;
  at: string;
  /** The epoch of the execution that wrote it. */
  epoch: number;
}

/** Where a fork came from: its source run and the point it was forked at. */
export interface ForkedFrom {
  run_id: string;
  checkpoint: number;
  message_index: number;
}

/** What a run parked for model capacity waits for: `model`'s limit, its job due again at `until` (ISO 8601). */
export interface RunWaiting {
  for: 'capacity';
  model: string;
  until: string;
}

/** What `POST /v1/{agents,teams}/:name/runs` answers. */
export interface CreatedRun {
  run_id: string;
  session_id: string;
  status: RunStatus;
}

/** What `POST /v1/runs/:run_id/continue` answers. */
export interface ContinuedRun extends CreatedRun {
  /** `resume` (same run), `fork` (a new run) or `already-queued`. */
  action: string;
}

/** What `POST /v1/runs/:run_id/fork` answers. */
export interface ForkedRun extends CreatedRun {
  forked_from: ForkedFrom;
}

/** Body of `POST /v1/runs/:run_id/fork`: every field optional (a fork at the last checkpoint). */
export interface ForkRunBody {
  /** The point: a checkpoint by its `seq`, or the `message_index` one ends at. @defaultValue the last checkpoint */
  at?: { checkpoint: number } | { message_index: number };
  /** A user message after the point; required where the history ends with the run's answer. */
  input?: string;
  /** @defaultValue the source's metadata */
  metadata?: Record<string, unknown>;
  /** @defaultValue the source's session */
  session_id?: string;
  /** The fork must end within this many ms of its creation. @defaultValue its entity's `maxDurationMs` */
  deadline_ms?: number;
}

/** What `POST /v1/runs/:run_id/cancel` answers. */
export interface CancelledRun extends CreatedRun {
  cancel_requested: true;
}

/** What `POST /v1/runs/:run_id/suspend` answers. */
export interface SuspendedRun extends CreatedRun {
  /** `suspended`: at once (the run was queued or paused); `requested`: it stops at its next checkpoint boundary; `already`: a suspension waits already. */
  suspend: 'suspended' | 'requested' | 'already';
  /** The `suspended` action the run waits on (null until a requested suspend is reached). */
  action_id: string | null;
}

/** What `POST /v1/runs/:run_id/resume` answers. */
export interface ResumedRun extends CreatedRun {
  /** True when this call resumed the run; false when it was resumed before (a no-op). */
  resumed: boolean;
  /** The `suspended` action the resume decided. */
  action_id: string;
}

/** Body of `POST /v1/runs/:run_id/continue`. */
export interface ContinueRunBody {
  /** A new user message appended before resuming. */
  input?: string;
  /** Start a new run from a COMPLETED run's messages. */
  fork?: boolean;
  /**
   * Resume a RUNNING or ERROR run on the worker's current definition of its entity, even when it
   * differs from the run's `definition_hash` (a run that ended in `DefinitionChangedError`).
   */
  upgrade?: boolean;
  /**
   * A new deadline: the run must end within this many ms of the continue (a fork: of its creation).
   * Required to resume a run whose deadline has passed (409 otherwise).
   */
  deadline_ms?: number;
}

/** A budget as the API takes it (on create, and to raise one in a budget action's approval). */
export interface BudgetParams {
  max_tokens?: number;
  max_cost_usd?: number;
  /**
   * How long a budget pause waits for a person, in ms; undecided by then, it is decided as rejected
   * and the run ends in ERROR (`BudgetExceededError`). @defaultValue none: it waits until decided
   */
  decision_timeout_ms?: number;
}

/** One human-in-the-loop decision (docs/human-in-the-loop.md). */
export type Decision = { action_id: string; args_digest?: string } &
  /** For a run's budget action, `budget` raises the run's budget (each limit above what was spent); a tenant's takes none. */
  (
    | { type: 'approve'; budget?: BudgetParams }
    | { type: 'edit'; args: Record<string, unknown> }
    | { type: 'reject'; message?: string }
    | { type: 'result'; output: string; is_error?: boolean }
  );

/** What `POST /v1/runs/:run_id/decisions` answers. */
export interface DecisionsResult {
  applied: string[];
  already_decided: string[];
  /** Actions of the run still undecided. */
  pending: number;
  status: RunStatus;
}

/**
 * One event of a run's stream. A team's stream holds its member runs' events
 * too (nested teams' included), marked by `member` and, in `data`, `run_id`,
 * `member_path` and `member_seq`.
 */
export interface RunStreamEvent {
  /** The event type: `RunStarted`, `ToolCallCompleted`, `ModelDelta`, ... */
  type: string;
  /**
   * The per-run sequence number of a stored event (of the member run, for a
   * member's event); `undefined` for a live one (`ModelDelta`, `AttemptAbandoned`).
   */
  seq: number | undefined;
  /**
   * The stream's position after this stored event (its SSE `id`): pass it as
   * `after` to resume right after it. The seq itself for a run without member
   * runs (`'7'`), then `.<key>-<seq>` per member run that sent events, the
   * key being the first 12 hex digits of its run id (`'7.3f2a9c1eab12-4'`);
   * `undefined` for a live event.
   */
  cursor: string | undefined;
  /** For a member run's event in its team's stream: the member run and its path from the root; `undefined` for the run's own. */
  member: { runId: string; path: string[] } | undefined;
  data: Record<string, unknown>;
}
