import type { ColumnType, Generated, GeneratedAlways, Selectable } from 'kysely';
import type {
  ActionDecision,
  ActionKind,
  ActionStatus,
  ApprovalTimeoutOutcome,
  CheckpointMode,
  EntityKind,
  ForkedFrom,
  Message,
  RunErrorInfo,
  RunStatus,
  SuspendRequest,
  ToolCallStatus,
} from '@cairn/engine';
import type { AttemptReason, Budget, EntityCaps, RunWaiting } from '@cairn/engine/store';
import type { ScheduleOverlap } from '@cairn/engine/lifecycle';
import type { StoredUsage } from './usage-column.js';
import type {
  WebhookAttemptsTable,
  WebhookEndpointsTable,
  WebhookEventsTable,
} from './webhooks/webhook-tables.js';

/** A jsonb column: read as parsed JSON, written as JSON text (pg would turn arrays into Postgres arrays). */
export type Json<T> = ColumnType<T, string, string>;

/** A jsonb column with a database default. */
export type GeneratedJson<T> = ColumnType<T, string | undefined, string>;

/** The `sessions` table: a conversation grouping runs, keyed by `(tenant_key, session_id)`. */
export interface SessionsTable {
  session_id: string;
  user_id: string | null;
  /** The tenant whose key created the session; null: an admin key. */
  tenant_id: ColumnType<string | null, string | null | undefined, string | null>;
  /** `tenant_id`, or '' for none (derived by Postgres): the session key's tenant part. */
  tenant_key: GeneratedAlways<string>;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
}

/** The `runs` table: one row per run, fenced by `epoch`. */
export interface RunsTable {
  run_id: string;
  session_id: string;
  user_id: string | null;
  parent_run_id: string | null;
  parent_tool_call_id: string | null;
  entity_kind: EntityKind;
  entity_name: string;
  status: RunStatus;
  input: string;
  content: string | null;
  checkpoint: CheckpointMode;
  last_checkpoint_at_message_index: Generated<number>;
  epoch: Generated<number>;
  error: ColumnType<RunErrorInfo | null, string | null | undefined, string | null>;
  /** Positional, compact: see {@link StoredUsage}. */
  usage: GeneratedJson<StoredUsage>;
  metadata: GeneratedJson<Record<string, unknown>>;
  cancel_requested_at: Date | null;
  /** A root run's suspend request waiting for a checkpoint boundary of the run it names; null: none. */
  suspend_request: ColumnType<SuspendRequest | null, string | null | undefined, string | null>;
  /** When a `suspended` action of the run was last approved: its attempts are counted from there (a fresh allowance). */
  attempts_reset_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
  /** The tenant of the run's session; null: an admin key's. */
  tenant_id: ColumnType<string | null, string | null | undefined, string | null>;
  /** `tenant_id`, or '' for none (derived by Postgres): with `session_id`, the run's session. */
  tenant_key: GeneratedAlways<string>;
  /** The continue request waiting to be applied, if any (`run_continue_requests.request_id`). */
  waiting_continue_request: ColumnType<string | null, string | null | undefined, string | null>;
  /** The digest of the entity's definition the run was created (or last resumed) on; null until a claim stamps it. */
  definition_hash: ColumnType<string | null, string | null | undefined, string | null>;
  /** When a worker first left the run for one with its entity or definition, since its last change; null: never. */
  awaiting_deploy_since: ColumnType<Date | null, Date | null | undefined, Date | null>;
  /** 1 (highest) to 10: orders the tenant's runs waiting for a model's permits; the jobs' queue priority. */
  priority: Generated<number>;
  /** What a root run's tree may spend (`{ maxTokens?, maxCostMicroUsd? }`); null: no budget. */
  budget: ColumnType<Budget | null, string | null | undefined, string | null>;
  /** The UTC day (`YYYY-MM-DD`) a person let the root run's tree go on past its tenant's spent day budget; null: none. */
  tenant_budget_exempt_day: ColumnType<string | null, string | null | undefined, string | null>;
  /** What the run, parked for model capacity, waits for; null while it is not parked. */
  waiting: ColumnType<RunWaiting | null, string | null | undefined, string | null>;
  /** When the run must have ended (null: no deadline); a member run's is its team's. */
  deadline_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
  /** A fork's: the run whose history its first `shared_history_length` messages are (read through it, never copied). */
  shared_history_run_id: ColumnType<string | null, string | null | undefined, string | null>;
  shared_history_length: ColumnType<number | null, number | null | undefined, number | null>;
  /** A fork's source and point (`{ run_id, checkpoint, message_index }`); null: not a fork. */
  forked_from: ColumnType<ForkedFrom | null, string | null | undefined, string | null>;
  schema_version: Generated<number>;
  /** The last event sequence number of the run (0: no event yet). */
  event_seq: Generated<number>;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
}

/**
 * The `run_commits` table: one row per durable write of a run (per 64 of its messages), never
 * rewritten: its messages `first_idx..end_idx - 1`, its events `first_seq..last_seq` and its
 * calls stored final (migrations `0019_run_commits`, `0020_commit_tool_calls`; the format is
 * `run-commits.ts`'s).
 */
export interface RunCommitsTable {
  run_id: string;
  last_seq: number;
  end_idx: number;
  first_seq: number;
  first_idx: number;
  messages: ColumnType<Message[] | null, string | null, string | null>;
  events: ColumnType<
    ({ type: string; data: unknown } | string)[] | null,
    string | null,
    string | null
  >;
  /** The write's calls stored final, in its first row (migration `0020_commit_tool_calls`, `run-commits.ts`). */
  calls: ColumnType<unknown[] | null, string | null | undefined, string | null>;
  /** Spaces that lift the row past the size at which Postgres compresses it (migration `0022_compressed_commits`); no reader reads it. */
  pad: ColumnType<string | null, string | null | undefined, string | null>;
  created_at: Generated<Date>;
}

/** The `run_messages` view of `run_commits`: a run's history, one row per message at `idx` (read only). */
export interface RunMessagesTable {
  run_id: string;
  idx: number;
  message: Json<Message>;
  created_at: Generated<Date>;
  /** The `first_idx` of the row holding the message: bound it (with `commit_end_idx`) to read a range by key. */
  commit_first_idx: number;
  /** The `end_idx` of the row holding the message. */
  commit_end_idx: number;
}

/**
 * The `tool_calls` view, one row per tool call (read only), and the `tool_call_rows` table behind it:
 * a call committed `running` has a row there, updated in place when it ends; a call committed final
 * is in its write's `run_commits.calls` (migration `0020_commit_tool_calls`).
 */
export interface ToolCallsTable {
  run_id: string;
  tool_call_id: string;
  name: string;
  args: Json<unknown>;
  result: string | null;
  status: ToolCallStatus;
  batch: number;
  idempotency_key: string;
  child_run_id: string | null;
  /** The epoch of the execution that wrote the row last. */
  epoch: number;
  started_at: Date;
  ended_at: Date | null;
  /** The `run_messages.idx` of the tool message holding the result, when `result` is NULL because it is stored there. */
  result_message_idx: ColumnType<number | null, number | null | undefined, number | null>;
}

/** The `run_attempts` table: one row per claim of a run. */
export interface RunAttemptsTable {
  run_id: string;
  epoch: number;
  worker_id: string;
  reason: AttemptReason;
  started_at: Generated<Date>;
  ended_at: Date | null;
  outcome: string | null;
}

/** The `run_events` view: a run's event stream, one row per event, numbered per run (read only). */
export interface RunEventsTable {
  run_id: string;
  seq: number;
  type: string;
  data: Json<unknown>;
  created_at: Generated<Date>;
  /** The `last_seq` of the `run_commits` row holding the event: bound it to read by that table's primary key. */
  batch_last_seq: number;
  /** A derived event stored compact (`data` its string): its batch's first event's epoch, to read it with. */
  batch_epoch: number | null;
  /** A derived event stored compact: its batch's first event's `at`, to read it with. */
  batch_at: string | null;
}

/** The `pending_actions` table: one row per gated tool call, decided once, consumed once. */
export interface PendingActionsTable {
  action_id: string;
  kind: ActionKind;
  run_id: string;
  root_run_id: string;
  member_path: Json<string[]>;
  tool_call_id: string;
  tool: string;
  args: Json<unknown>;
  args_digest: string;
  /** JSON Schema of the tool's parameters when the call paused (null: unknown). */
  args_schema: ColumnType<Record<string, unknown> | null, string | null | undefined, string | null>;
  batch: number;
  status: ColumnType<ActionStatus, ActionStatus | undefined, ActionStatus>;
  decision: ColumnType<ActionDecision | null, string | null | undefined, string | null>;
  on_timeout: ApprovalTimeoutOutcome;
  expires_at: Date | null;
  decided_at: Date | null;
  consumed_at: Date | null;
  consumed_epoch: number | null;
  created_at: Generated<Date>;
}

/** The `run_idempotency_keys` table: the run an `Idempotency-Key` created, per tenant. */
export interface RunIdempotencyKeysTable {
  /** The tenant, or '' for admin keys. */
  scope: string;
  idempotency_key: string;
  run_id: string;
  /** Digest of the request that created the run: a different request with the same key is refused. */
  request_digest: string;
  created_at: Generated<Date>;
}

/** The `run_continue_requests` table: continues asked for, with their input, until an execution applies them. */
export interface RunContinueRequestsTable {
  request_id: Generated<string>;
  run_id: string;
  input: string | null;
  /** `continue { upgrade: true }`: the run may resume on a changed definition of its entity. */
  upgrade: Generated<boolean>;
  requested_at: Generated<Date>;
  /** The epoch of the execution whose commit applied the request; null while it waits. */
  applied_epoch: number | null;
  applied_at: Date | null;
}

/** Every table of the store, for `Kysely<Database>`. */
export interface Database {
  sessions: SessionsTable;
  runs: RunsTable;
  run_messages: RunMessagesTable;
  tool_calls: ToolCallsTable;
  tool_call_rows: ToolCallsTable;
  run_attempts: RunAttemptsTable;
  run_events: RunEventsTable;
  run_commits: RunCommitsTable;
  pending_actions: PendingActionsTable;
  served_entities: ServedEntitiesTable;
  run_idempotency_keys: RunIdempotencyKeysTable;
  run_continue_requests: RunContinueRequestsTable;
  revoked_browser_sessions: RevokedBrowserSessionsTable;
  tenant_day_spend: TenantDaySpendTable;
  tenant_model_day_spend: TenantModelDaySpendTable;
  webhook_endpoints: WebhookEndpointsTable;
  webhook_events: WebhookEventsTable;
  webhook_attempts: WebhookAttemptsTable;
  schedules: SchedulesTable;
  schedule_firings: ScheduleFiringsTable;
}

/** The `tenant_day_spend` table: what each tenant's runs cost per UTC day, counted by the commits of their turns. */
export interface TenantDaySpendTable {
  tenant_id: string;
  /** The UTC day (a `date`; read it as `day::text`). */
  day: ColumnType<string, string, never>;
  /** Integer micro-dollars (bigint, read as a number). */
  cost_micro_usd: Generated<number>;
}

/** The `tenant_model_day_spend` table: `tenant_day_spend` split by model (`Model.name`), counted by the same commits. */
export interface TenantModelDaySpendTable {
  /** The UTC day (a `date`; read it as `day::text`). */
  day: ColumnType<string, string, never>;
  tenant_id: string;
  model: string;
  /** Integer micro-dollars (bigint, read as a number). */
  cost_micro_usd: Generated<number>;
}

/** The `revoked_browser_sessions` table: signed-out browser sessions, until their cookie expires. */
export interface RevokedBrowserSessionsTable {
  nonce: string;
  expires_at: Date;
  revoked_at: Generated<Date>;
}

/** The `served_entities` table: which worker last announced an entity (and its definition), and when. */
export interface ServedEntitiesTable {
  entity_kind: EntityKind;
  entity_name: string;
  /** '' when the worker's registry gives no definition hash. */
  definition_hash: Generated<string>;
  checkpoint: CheckpointMode;
  /** The entity's `maxDurationMs` (the default deadline of its runs, in ms); null: none. */
  max_duration_ms: ColumnType<number | null, number | null | undefined, number | null>;
  /** The entity's `budget` (the default budget of its runs); null: none. */
  budget: ColumnType<Budget | null, string | null | undefined, string | null>;
  /** The entity's `caps` (what a request for its runs may not exceed); null: none. */
  caps: ColumnType<EntityCaps | null, string | null | undefined, string | null>;
  worker_id: string;
  first_seen_at: Generated<Date>;
  last_seen_at: Generated<Date>;
}

/** A `runs` row as read. */
export type RunRow = Selectable<RunsTable>;
/** A `tool_calls` row as read. */
export type ToolCallRow = Selectable<ToolCallsTable>;
/** A `run_attempts` row as read. */
export type RunAttemptRow = Selectable<RunAttemptsTable>;
/** A `run_commits` row as read. */
export type RunCommitRow = Selectable<RunCommitsTable>;
/** A `pending_actions` row as read. */
export type PendingActionRow = Selectable<PendingActionsTable>;

/** Version of the persisted run state the current code writes (the `runs.schema_version` default). */
export const RUN_STATE_SCHEMA_VERSION = 1;

/** The `schedules` table: what a schedule starts, when, and under which overlap policy (`0025_schedules`). */
export interface SchedulesTable {
  schedule_id: string;
  tenant_id: string | null;
  entity_kind: EntityKind;
  entity_name: string;
  input: string;
  /** The run create fields besides entity and input, as the API names them (`session_id`, `budget`, ...). */
  run_fields: ColumnType<Record<string, unknown>, string | undefined, string>;
  /** A cron pattern (with `timezone`), or null with `every_ms`. */
  cron: string | null;
  /** An IANA time zone, with `cron`. */
  timezone: string | null;
  /** An interval in ms, or null with `cron`. */
  every_ms: number | null;
  overlap: Generated<ScheduleOverlap>;
  paused: Generated<boolean>;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
}

/** What became of a firing: a run started, skipped by the overlap policy, or buffered until the previous run ends. */
export type FiringOutcome = 'started' | 'skipped' | 'buffered';

/** The `schedule_firings` table: one row per firing of a schedule, keyed by its time. */
export interface ScheduleFiringsTable {
  schedule_id: string;
  fire_time: Date;
  tenant_id: string | null;
  outcome: FiringOutcome;
  /** The run it started (null while starting, when skipped or buffered, or once the run is deleted). */
  run_id: string | null;
  /** Why it was skipped (the previous run and its status, or the error that refused the run). */
  note: string | null;
  recorded_at: Generated<Date>;
}
