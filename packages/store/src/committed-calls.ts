import type { Message, ToolCallRequest } from '@cairn/engine';
import { idempotencyKeyFor } from '@cairn/engine/store';
import type { ToolCallRow } from './schema.js';

/** A tool call as the writer hands it to {@link committedCallsJson}: its `tool_calls` columns, the writer's epoch and `result_ord`. */
export interface CallToCommit {
  tool_call_id: string;
  name: string;
  args: unknown;
  result: string | null;
  status: ToolCallRow['status'];
  batch: number;
  idempotency_key: string;
  child_run_id: string | null;
  started_at: Date;
  ended_at: Date | null;
  epoch: number;
  /** 1-based place among the write's messages of the tool message holding the result (its `result` null then). */
  result_ord: number | null;
}

/**
 * A call as a `run_commits.calls` element stores it (migrations `0020_commit_tool_calls`,
 * `0023_compact_calls`). What the row says elsewhere is left out: `name` and `args` when an
 * assistant message of the same row asked for the call with that name and those arguments;
 * `key` when it is the run's default for the call (`<run id>:<call id>`); `result`, `child` and
 * `ro` when null.
 */
interface CommittedCall {
  id: string;
  name?: string;
  args?: unknown;
  result?: string | null;
  status: ToolCallRow['status'];
  batch: number;
  key?: string;
  child?: string | null;
  epoch: number;
  /** ISO 8601, as JSON gives a `Date`. */
  started: string;
  ended: string | null;
  ro?: number | null;
}

/** The tool calls the assistant messages of `messages` ask for, by id. */
function requestsOf(messages: readonly Message[]): Map<string, ToolCallRequest> {
  const requests = new Map<string, ToolCallRequest>();
  for (const message of messages) {
    if (message.role !== 'assistant') continue;
    for (const request of message.toolCalls ?? []) requests.set(request.id, request);
  }
  return requests;
}

/** Whether the arguments text `text` parses to what serializes as `args` does. */
function argumentsSay(text: string, args: unknown): boolean {
  try {
    return JSON.stringify(JSON.parse(text)) === JSON.stringify(args);
  } catch {
    return false;
  }
}

/**
 * The calls of run `runId`'s write, as its first row's `calls` JSON text (null when there are
 * none), given the messages that row holds (`rowMessages`).
 */
export function committedCallsJson(
  runId: string,
  calls: readonly CallToCommit[],
  rowMessages: readonly Message[],
): string | null {
  if (calls.length === 0) return null;
  const requests = requestsOf(rowMessages);
  return JSON.stringify(
    calls.map((c): CommittedCall => {
      const asked = requests.get(c.tool_call_id);
      const askedSo = asked?.name === c.name && argumentsSay(asked.arguments, c.args);
      return {
        id: c.tool_call_id,
        ...(!askedSo && { name: c.name, args: c.args }),
        ...(c.result !== null && { result: c.result }),
        status: c.status,
        batch: c.batch,
        ...(c.idempotency_key !== idempotencyKeyFor(runId, c.tool_call_id) && {
          key: c.idempotency_key,
        }),
        ...(c.child_run_id !== null && { child: c.child_run_id }),
        epoch: c.epoch,
        started: c.started_at.toISOString(),
        ended: c.ended_at?.toISOString() ?? null,
        ...(c.result_ord !== null && { ro: c.result_ord }),
      };
    }),
  );
}

/** A row's calls as `tool_calls` rows (what the view gives in SQL): `first_idx` is the row's. */
export function toolCallsOfRow(row: {
  run_id: string;
  first_idx: number;
  calls: unknown[] | null;
  messages: Message[] | null;
}): ToolCallRow[] {
  const requests = requestsOf(row.messages ?? []);
  return ((row.calls ?? []) as CommittedCall[]).map((c) => {
    const asked = c.name === undefined ? requests.get(c.id) : undefined;
    if (c.name === undefined && asked === undefined)
      throw new Error(
        `run ${row.run_id}: the stored call ${c.id} leaves its name to a message its row does not hold`,
      );
    return {
      run_id: row.run_id,
      tool_call_id: c.id,
      name: asked?.name ?? c.name!,
      args: asked ? (JSON.parse(asked.arguments) as unknown) : c.args,
      result: c.result ?? null,
      status: c.status,
      batch: c.batch,
      idempotency_key: c.key ?? idempotencyKeyFor(row.run_id, c.id),
      child_run_id: c.child ?? null,
      epoch: c.epoch,
      started_at: new Date(c.started),
      ended_at: c.ended === null ? null : new Date(c.ended),
      result_message_idx: c.ro == null ? null : row.first_idx + c.ro - 1,
    };
  });
}
