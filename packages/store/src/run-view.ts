import type { Kysely } from 'kysely';
import type {
  ActionKind,
  ActionStatus,
  CheckpointMode,
  CheckpointRecord,
  ForkedFrom,
  Message,
  RunErrorInfo,
  RunStatus,
  ToolCallStatus,
  Usage,
  UsageView,
} from '@cairn/engine';
import { sumUsage, usageView, usdOf } from '@cairn/engine';
import type { AttemptReason, EntityRef, RunWaiting } from '@cairn/engine/store';
import type { Database, PendingActionRow, RunAttemptRow, RunRow, ToolCallRow } from './schema.js';
import { implicitSession } from './implicit-session.js';
import { withRunTree } from './run-tree.js';
import { readToolCalls } from './read-tool-calls.js';
import { listCheckpoints, readHistory } from './run-history.js';
import { withStoredResult } from './run-row.js';
import { tenantKeyOf, type SessionKey } from './session-key.js';
import { usageOfStored } from './usage-column.js';

/** One tool call as the API returns it. */
export interface ToolCallView {
  tool_call_id: string;
  name: string;
  /** The parsed arguments, in every status (the model's raw text when it sent invalid JSON). */
  args: unknown;
  result: string | null;
  status: ToolCallStatus;
  batch: number;
  idempotency_key: string;
  child_run_id: string | null;
  started_at: string;
  ended_at: string | null;
}

/** A gated tool call waiting for a person, as the API returns it. */
export interface PendingActionView {
  action_id: string;
  kind: ActionKind;
  /** The run that made the call (the member run for a member's action). */
  run_id: string;
  member_path: string[];
  tool_call_id: string;
  tool: string;
  args: unknown;
  args_digest: string;
  status: ActionStatus;
  expires_at: string | null;
  decided_at: string | null;
  created_at: string;
}

/** One claim of a run as the API returns it. */
export interface AttemptView {
  epoch: number;
  worker_id: string;
  reason: AttemptReason;
  started_at: string;
  ended_at: string | null;
  outcome: string | null;
}

/** A run as the API returns it (docs/http-api.md): snake_case, as stored. */
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
  usage: UsageView;
  /** The same over the run's tree: the run and its member runs, recursively. */
  usage_total: UsageView;
  /** What the run's tree may spend (a root run's, raised by approved budget actions); null: no budget. */
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
  /** 1 (highest) to 10: its order among the tenant's runs waiting for a model's permits. */
  priority: number;
  /** While the run is parked for model capacity (RUNNING, no worker holds it): what it waits for, and until when its job is due. */
  waiting: RunWaiting | null;
  /** When the run must have ended (ISO 8601; a member run's is its team's); null: no deadline. */
  deadline_at: string | null;
  /** Every committed checkpoint of its history, in order: the points it can be forked at. */
  checkpoints: CheckpointView[];
  /** A fork's source run and the point it was forked at; null: not a fork. */
  forked_from: ForkedFrom | null;
  /** The runs forked from this one, oldest first. */
  forks: string[];
  created_at: string;
  updated_at: string;
}

/** One committed checkpoint of a run's history (a fork's begin with its source's up to its point). */
export interface CheckpointView {
  /** 1-based: `{ "at": { "checkpoint": seq } }` forks here. */
  seq: number;
  /** How many messages the history holds at this checkpoint. */
  message_index: number;
  at: string;
  /** The epoch of the execution that wrote it (0: the run's creation). */
  epoch: number;
}

/** A run listed in its session, without history. */
export type RunSummaryView = Pick<
  RunView,
  | 'run_id'
  | 'entity'
  | 'status'
  | 'input'
  | 'content'
  | 'checkpoint'
  | 'last_checkpoint_at_message_index'
  | 'error'
  | 'usage'
  | 'waiting'
  | 'created_at'
  | 'updated_at'
>;

/** A session as the API returns it: its top-level runs, oldest first. */
export interface SessionView {
  session_id: string;
  user_id: string | null;
  created_at: string;
  updated_at: string;
  runs: RunSummaryView[];
}

/** What {@link getRunView} reads besides the runs themselves. */
export interface RunViewOptions {
  /**
   * Read the messages; without them every `messages` is empty (a page reads them one page at a time).
   * @defaultValue true
   */
  messages?: boolean;
}

/** The run and its member runs (recursively) with messages, tool calls, attempts, checkpoints and forks. */
export async function getRunView(
  db: Kysely<Database>,
  runId: string,
  options: RunViewOptions = {},
): Promise<RunView | undefined> {
  const runs = await withRunTree(db, runId, { includeRoot: true })
    .selectFrom('runs')
    .selectAll('runs')
    .where('runs.run_id', 'in', (eb) => eb.selectFrom('tree').select('tree.run_id'))
    .orderBy('created_at')
    .orderBy('run_id')
    .execute();
  if (runs.length === 0) return undefined;
  const ids = runs.map((r) => r.run_id);
  const rootRow = runs.find((r) => r.run_id === runId)!;
  const [messages, tools, attempts, actions, checkpoints, forks, forkHistory] = await Promise.all([
    readMessages(db, ids),
    readToolCalls(db, ids),
    db.selectFrom('run_attempts').selectAll().where('run_id', 'in', ids).orderBy('epoch').execute(),
    db
      .selectFrom('pending_actions')
      .selectAll()
      .where('run_id', 'in', ids)
      .where('status', '=', 'pending')
      .orderBy('created_at')
      .orderBy('action_id')
      .execute(),
    Promise.all(ids.map((id) => listCheckpoints(db, id))),
    db
      .selectFrom('runs')
      .select(['run_id', 'shared_history_run_id'])
      .where('shared_history_run_id', 'in', ids)
      .orderBy('created_at')
      .execute(),
    // A fork's history begins with its source's: read through it, with its own messages after.
    rootRow.shared_history_run_id !== null && options.messages !== false
      ? readHistory(db, runId)
      : undefined,
  ]);
  const checkpointsOf = new Map(ids.map((id, i) => [id, checkpoints[i]!]));
  const messageAt = new Map(messages.map((m) => [`${m.run_id}:${m.idx}`, m.message]));
  const views = new Map<string, RunView>(
    runs.map((row) => [
      row.run_id,
      toRunView(
        row,
        options.messages === false
          ? []
          : row.run_id === runId && forkHistory
            ? forkHistory.map((m) => m.message)
            : messages.filter((m) => m.run_id === row.run_id).map((m) => m.message),
        tools
          .filter((t) => t.run_id === row.run_id)
          .map((t) =>
            toToolCallView(withStoredResult(t, (idx) => messageAt.get(`${t.run_id}:${idx}`))),
          ),
        attempts.filter((a) => a.run_id === row.run_id).map(toAttemptView),
        checkpointsOf.get(row.run_id)!.map(toCheckpointView),
        forks.filter((f) => f.shared_history_run_id === row.run_id).map((f) => f.run_id),
      ),
    ]),
  );
  for (const view of views.values()) {
    if (view.run_id !== runId && view.parent_run_id)
      views.get(view.parent_run_id)?.member_runs.push(view);
  }
  const root = views.get(runId);
  if (root) addTreeUsage(root, new Map(runs.map((r) => [r.run_id, usageOfStored(r.usage)])));
  for (const action of actions) {
    // Listed on the run that made the call and on every run above it in the tree.
    for (
      let view = views.get(action.run_id);
      view;
      view = view.run_id === runId ? undefined : views.get(view.parent_run_id ?? '')
    ) {
      view.pending_actions.push(toPendingActionView(action));
    }
  }
  return views.get(runId);
}

/** Sets each view's `usage_total`: its own usage and its member runs' totals. */
function addTreeUsage(view: RunView, usageOf: ReadonlyMap<string, Usage>): Usage {
  const total = sumUsage([
    usageOf.get(view.run_id)!,
    ...view.member_runs.map((member) => addTreeUsage(member, usageOf)),
  ]);
  view.usage_total = usageView(total);
  return total;
}

/** The session (its row, or its runs' when it has none: implicit-session.ts) with summaries of its top-level runs, or undefined when there is none. */
export async function getSessionView(
  db: Kysely<Database>,
  key: SessionKey,
): Promise<SessionView | undefined> {
  const tenantKey = tenantKeyOf(key.tenantId);
  const session =
    (await db
      .selectFrom('sessions')
      .select(['user_id', 'created_at', 'updated_at'])
      .where('tenant_key', '=', tenantKey)
      .where('session_id', '=', key.sessionId)
      .executeTakeFirst()) ?? (await implicitSession(db, key));
  if (!session) return undefined;
  const runs = await db
    .selectFrom('runs')
    .selectAll()
    .where('tenant_key', '=', tenantKey)
    .where('session_id', '=', key.sessionId)
    .where('parent_run_id', 'is', null)
    .orderBy('created_at')
    .orderBy('run_id')
    .execute();
  return {
    session_id: key.sessionId,
    user_id: session.user_id,
    created_at: session.created_at.toISOString(),
    updated_at: session.updated_at.toISOString(),
    runs: runs.map(toRunSummaryView),
  };
}

/** A `runs` row as a {@link RunSummaryView}. */
export function toRunSummaryView(row: RunRow): RunSummaryView {
  return {
    run_id: row.run_id,
    entity: { kind: row.entity_kind, name: row.entity_name },
    status: row.status,
    input: row.input,
    content: row.content,
    checkpoint: row.checkpoint,
    last_checkpoint_at_message_index: row.last_checkpoint_at_message_index,
    error: row.error,
    usage: usageView(usageOfStored(row.usage)),
    waiting: row.waiting,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

function toRunView(
  row: RunRow,
  messages: Message[],
  tools: ToolCallView[],
  attempts: AttemptView[],
  checkpoints: CheckpointView[],
  forks: string[],
): RunView {
  return {
    run_id: row.run_id,
    session_id: row.session_id,
    user_id: row.user_id,
    parent_run_id: row.parent_run_id,
    parent_tool_call_id: row.parent_tool_call_id,
    entity: { kind: row.entity_kind, name: row.entity_name },
    status: row.status,
    input: row.input,
    content: row.content,
    checkpoint: row.checkpoint,
    last_checkpoint_at_message_index: row.last_checkpoint_at_message_index,
    epoch: row.epoch,
    messages,
    tools,
    member_runs: [],
    attempts,
    pending_actions: [],
    error: row.error,
    usage: usageView(usageOfStored(row.usage)),
    usage_total: usageView(usageOfStored(row.usage)),
    budget: row.budget && {
      max_tokens: row.budget.maxTokens ?? null,
      max_cost_usd:
        row.budget.maxCostMicroUsd === undefined ? null : usdOf(row.budget.maxCostMicroUsd),
      decision_timeout_ms: row.budget.decisionTimeoutMs ?? null,
    },
    metadata: row.metadata,
    cancel_requested_at: row.cancel_requested_at?.toISOString() ?? null,
    definition_hash: row.definition_hash,
    priority: row.priority,
    waiting: row.waiting,
    deadline_at: row.deadline_at?.toISOString() ?? null,
    checkpoints,
    forked_from: row.forked_from,
    forks,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

function toCheckpointView(checkpoint: CheckpointRecord): CheckpointView {
  return {
    seq: checkpoint.seq,
    message_index: checkpoint.messageIndex,
    at: checkpoint.at.toISOString(),
    epoch: checkpoint.epoch,
  };
}

function toToolCallView(row: ToolCallRow): ToolCallView {
  return {
    tool_call_id: row.tool_call_id,
    name: row.name,
    args: row.args,
    result: row.result,
    status: row.status,
    batch: row.batch,
    idempotency_key: row.idempotency_key,
    child_run_id: row.child_run_id,
    started_at: row.started_at.toISOString(),
    ended_at: row.ended_at?.toISOString() ?? null,
  };
}

function toPendingActionView(row: PendingActionRow): PendingActionView {
  return {
    action_id: row.action_id,
    kind: row.kind,
    run_id: row.run_id,
    member_path: row.member_path,
    tool_call_id: row.tool_call_id,
    tool: row.tool,
    args: row.args,
    args_digest: row.args_digest,
    status: row.status,
    expires_at: row.expires_at?.toISOString() ?? null,
    decided_at: row.decided_at?.toISOString() ?? null,
    created_at: row.created_at.toISOString(),
  };
}

function toAttemptView(row: RunAttemptRow): AttemptView {
  return {
    epoch: row.epoch,
    worker_id: row.worker_id,
    reason: row.reason,
    started_at: row.started_at.toISOString(),
    ended_at: row.ended_at?.toISOString() ?? null,
    outcome: row.outcome,
  };
}

/**
 * The runs' messages in order, read from their `run_commits` rows (each row's
 * messages one `json` value, parsed once). A view without messages reads them
 * too: tool results are stored once, in their tool message.
 */
async function readMessages(
  db: Kysely<Database>,
  ids: string[],
): Promise<{ run_id: string; idx: number; message: Message }[]> {
  const rows = await db
    .selectFrom('run_commits')
    .select(['run_id', 'first_idx', 'messages'])
    .where('run_id', 'in', ids)
    .where('messages', 'is not', null)
    .orderBy('run_id')
    .orderBy('last_seq')
    .orderBy('end_idx')
    .execute();
  return rows.flatMap((row) =>
    (row.messages ?? []).map((message, i) => ({
      run_id: row.run_id,
      idx: row.first_idx + i,
      message,
    })),
  );
}
