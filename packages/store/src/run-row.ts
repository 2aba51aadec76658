import type { Message, RunRecord, ToolCallRecord } from '@cairn/engine';
import type { RunRow, ToolCallRow } from './schema.js';
import { usageOfStored } from './usage-column.js';

/**
 * The `runs` columns {@link toRunRecord} reads, for a statement that returns a run by name: a prepared
 * `returning *` fails ("cached plan must not change result type") once a migration adds a column.
 */
export const RUN_RECORD_COLUMNS = [
  'run_id',
  'session_id',
  'user_id',
  'parent_run_id',
  'parent_tool_call_id',
  'entity_kind',
  'entity_name',
  'status',
  'input',
  'content',
  'checkpoint',
  'last_checkpoint_at_message_index',
  'epoch',
  'error',
  'usage',
  'metadata',
  'cancel_requested_at',
  'suspend_request',
  'tenant_id',
  'waiting_continue_request',
  'definition_hash',
  'forked_from',
  'priority',
  'waiting',
  'budget',
  'tenant_budget_exempt_day',
  'deadline_at',
  'created_at',
  'updated_at',
] as const satisfies readonly (keyof RunRow)[];

/** The part of a `runs` row that {@link toRunRecord} maps. */
export type RunRecordRow = Pick<RunRow, (typeof RUN_RECORD_COLUMNS)[number]>;

/** Maps a `runs` row to the engine's `RunRecord`. */
export function toRunRecord(row: RunRecordRow): RunRecord {
  return {
    runId: row.run_id,
    sessionId: row.session_id,
    userId: row.user_id,
    parentRunId: row.parent_run_id,
    parentToolCallId: row.parent_tool_call_id,
    entity: { kind: row.entity_kind, name: row.entity_name },
    status: row.status,
    input: row.input,
    content: row.content,
    checkpoint: row.checkpoint,
    lastCheckpointAtMessageIndex: row.last_checkpoint_at_message_index,
    epoch: row.epoch,
    error: row.error,
    usage: usageOfStored(row.usage),
    metadata: row.metadata,
    cancelRequestedAt: row.cancel_requested_at,
    suspendRequest: row.suspend_request,
    tenantId: row.tenant_id,
    waitingContinueRequestId:
      row.waiting_continue_request === null ? null : String(row.waiting_continue_request),
    definitionHash: row.definition_hash,
    forkedFrom: row.forked_from,
    priority: row.priority,
    waiting: row.waiting,
    budget: row.budget,
    tenantBudgetExemptDay: row.tenant_budget_exempt_day,
    deadlineAt: row.deadline_at,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/** Maps a `tool_calls` row to the engine's `ToolCallRecord`. */
export function toToolCallRecord(row: ToolCallRow): ToolCallRecord {
  return {
    toolCallId: row.tool_call_id,
    name: row.name,
    args: row.args,
    result: row.result,
    status: row.status,
    batch: row.batch,
    idempotencyKey: row.idempotency_key,
    childRunId: row.child_run_id,
    startedAt: row.started_at,
    endedAt: row.ended_at,
  };
}

/** The row with its result read from its tool message, when it is stored there (`result_message_idx`) instead of in `result`. */
export function withStoredResult(
  row: ToolCallRow,
  messageAt: (idx: number) => Message | undefined,
): ToolCallRow {
  if (row.result !== null || row.result_message_idx === null) return row;
  const message = messageAt(row.result_message_idx);
  return { ...row, result: message?.role === 'tool' ? message.content : null };
}
