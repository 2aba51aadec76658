import { sql } from 'kysely';
import type { Kysely } from 'kysely';
import { interruptedToolResult, type FinishStatus } from '@cairn/engine/store';
import type { Database } from './schema.js';

/** Inside a finish written outside any execution (a forced cancel): closes the runs' `running` tool rows. */
export async function closeRunningToolCalls(
  db: Kysely<Database>,
  runIds: readonly string[],
  status: FinishStatus,
): Promise<void> {
  if (runIds.length === 0) return;
  await db
    .updateTable('tool_call_rows')
    .set({ status: 'error', result: interruptedToolResult(status), ended_at: sql`now()` })
    .where('run_id', 'in', runIds)
    .where('status', '=', 'running')
    .execute();
}
