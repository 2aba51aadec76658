import { sql } from 'kysely';
import type { Kysely } from 'kysely';
import { LeaseLostError } from '@cairn/engine';
import type { CheckpointDelta } from '@cairn/engine/store';
import { toToolCallRow } from './run-row.js';
import type { Database } from './schema.js';

/**
 * Commits a checkpoint in ONE statement (one round trip, its own
 * transaction): the fenced UPDATE of the run advances its message index, and
 * the message and tool-call inserts select from that UPDATE, so when the
 * epoch no longer holds the run nothing at all is written. Its cost depends
 * on the delta only, never on the history.
 */
export async function commitCheckpoint(
  db: Kysely<Database>,
  runId: string,
  epoch: number,
  delta: CheckpointDelta,
): Promise<number> {
  const n = delta.messages.length;
  const messages = delta.messages.map((m) => JSON.stringify(m));
  const latestCalls = [...new Map(delta.toolCalls.map((c) => [c.toolCallId, c])).values()];
  const calls = JSON.stringify(latestCalls.map((c) => ({ ...toToolCallRow(runId, epoch, c), args: c.args ?? null })));
  const { rows } = await sql<{ next: number }>`
    with run as (
      update runs
         set last_checkpoint_at_message_index = last_checkpoint_at_message_index + ${n},
             usage = ${JSON.stringify(delta.usage)}::jsonb,
             updated_at = now()
       where run_id = ${runId} and epoch = ${epoch} and status = 'RUNNING'
      returning last_checkpoint_at_message_index as next
    ),
    new_messages as (
      insert into run_messages (run_id, idx, message)
      select ${runId}, run.next - ${n} + m.ord - 1, m.message::jsonb
        from run, unnest(${messages}::text[]) with ordinality as m(message, ord)
    ),
    new_calls as (
      insert into tool_calls (run_id, tool_call_id, name, args, result, status, batch,
                              idempotency_key, child_run_id, epoch, started_at, ended_at)
      select c.run_id, c.tool_call_id, c.name, c.args, c.result, c.status, c.batch,
             c.idempotency_key, c.child_run_id, c.epoch, c.started_at, c.ended_at
        from run, jsonb_to_recordset(${calls}::jsonb) as c(
               run_id text, tool_call_id text, name text, args jsonb, result text, status text,
               batch int, idempotency_key text, child_run_id text, epoch int,
               started_at timestamptz, ended_at timestamptz)
      on conflict (run_id, tool_call_id) do update
         set name = excluded.name, args = excluded.args, result = excluded.result,
             status = excluded.status, batch = excluded.batch,
             idempotency_key = excluded.idempotency_key, child_run_id = excluded.child_run_id,
             epoch = excluded.epoch, ended_at = excluded.ended_at
    )
    select next from run`.execute(db);
  const row = rows[0];
  if (!row) throw new LeaseLostError(runId, epoch);
  return row.next;
}
