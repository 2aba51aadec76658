import type { Kysely } from 'kysely';
import type { Message, ToolCallRecord } from '@cairn/engine';
import type { CheckpointDelta } from '@cairn/engine/store';
import { toToolCallRow } from './run-row.js';
import type { Database } from './schema.js';

/** Rows per INSERT, well under Postgres' 65535 bind parameters. */
const CHUNK_ROWS = 1000;

/** Inserts `messages` at indices `[start, start + messages.length)` in multi-row INSERTs. */
export async function insertMessages(
  db: Kysely<Database>,
  runId: string,
  start: number,
  messages: readonly Message[],
): Promise<void> {
  for (let offset = 0; offset < messages.length; offset += CHUNK_ROWS) {
    const rows = messages.slice(offset, offset + CHUNK_ROWS).map((message, i) => ({
      run_id: runId,
      idx: start + offset + i,
      message: JSON.stringify(message),
    }));
    await db.insertInto('run_messages').values(rows).execute();
  }
}

/** Inserts tool call rows, or updates them in place when the id exists (a `running` row finishing). */
export async function upsertToolCalls(
  db: Kysely<Database>,
  runId: string,
  epoch: number,
  calls: readonly ToolCallRecord[],
): Promise<void> {
  const latest = [...new Map(calls.map((c) => [c.toolCallId, c])).values()];
  if (latest.length === 0) return;
  await db
    .insertInto('tool_calls')
    .values(latest.map((c) => toToolCallRow(runId, epoch, c)))
    .onConflict((oc) =>
      oc.columns(['run_id', 'tool_call_id']).doUpdateSet((eb) => ({
        name: eb.ref('excluded.name'),
        args: eb.ref('excluded.args'),
        result: eb.ref('excluded.result'),
        status: eb.ref('excluded.status'),
        batch: eb.ref('excluded.batch'),
        idempotency_key: eb.ref('excluded.idempotency_key'),
        child_run_id: eb.ref('excluded.child_run_id'),
        epoch: eb.ref('excluded.epoch'),
        ended_at: eb.ref('excluded.ended_at'),
      })),
    )
    .execute();
}

/** Writes a checkpoint delta whose messages start at index `start`; call inside the fenced transaction. */
export async function appendDelta(
  db: Kysely<Database>,
  runId: string,
  epoch: number,
  start: number,
  delta: CheckpointDelta,
): Promise<void> {
  await insertMessages(db, runId, start, delta.messages);
  await upsertToolCalls(db, runId, epoch, delta.toolCalls);
}
