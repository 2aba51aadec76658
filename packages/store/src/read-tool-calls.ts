import type { Kysely } from 'kysely';
import { toolCallsOfRow } from './committed-calls.js';
import type { Database, ToolCallRow } from './schema.js';

/**
 * The runs' tool calls as `tool_calls` rows, in batch order (by batch, start, id): those committed
 * final from their writes' `run_commits` rows (parsed in Node, once per row, with the row's
 * messages, which may hold a call's name and arguments), and those committed
 * `running` from `tool_call_rows`; a call recorded twice (the engine does not, but nothing keys a
 * committed call) reads as its latest record, as the old table's upsert kept it. Reads what the
 * `tool_calls` view gives, without the view's per-call JSON parsing in SQL.
 */
export async function readToolCalls(
  db: Kysely<Database>,
  runIds: readonly string[],
): Promise<ToolCallRow[]> {
  if (runIds.length === 0) return [];
  const [committed, rows] = await Promise.all([
    db
      .selectFrom('run_commits')
      .select(['run_id', 'first_idx', 'calls', 'messages'])
      .where('run_id', 'in', runIds)
      .where('calls', 'is not', null)
      .orderBy('run_id')
      .orderBy('last_seq')
      .orderBy('end_idx')
      .execute(),
    db.selectFrom('tool_call_rows').selectAll().where('run_id', 'in', runIds).execute(),
  ]);
  // A call is one call, whatever stored it twice: its latest record (a later write, or its own row).
  const latest = new Map<string, ToolCallRow>();
  for (const call of [...committed.flatMap(toolCallsOfRow), ...rows]) {
    latest.set(`${call.run_id}\u0000${call.tool_call_id}`, call);
  }
  return [...latest.values()].sort(inBatchOrder);
}

function inBatchOrder(a: ToolCallRow, b: ToolCallRow): number {
  return (
    a.batch - b.batch ||
    a.started_at.getTime() - b.started_at.getTime() ||
    (a.tool_call_id < b.tool_call_id ? -1 : a.tool_call_id > b.tool_call_id ? 1 : 0)
  );
}
