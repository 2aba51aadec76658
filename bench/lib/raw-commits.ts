import type pg from 'pg';
import type { CheckpointDelta } from '@cairn/engine/store';

/** Creates `bare_messages`: one jsonb column, no key, no index: the floor for durable bytes. */
export async function createBareTable(pool: pg.Pool): Promise<void> {
  await pool.query('CREATE TABLE IF NOT EXISTS bare_messages (body jsonb NOT NULL)');
}

function valuesList(count: number): string {
  return Array.from({ length: count }, (_, i) => `($${i + 1}::jsonb)`).join(', ');
}

/** The physical limit: BEGIN; one multi-row INSERT of `rows` (JSON texts); COMMIT (3 round trips). */
export async function rawTransaction(pool: pg.Pool, rows: readonly string[]): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    await client.query(`INSERT INTO bare_messages (body) VALUES ${valuesList(rows.length)}`, [...rows]);
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}

/** The same INSERT as one autocommitted statement (1 round trip). */
export async function rawStatement(pool: pg.Pool, rows: readonly string[]): Promise<void> {
  await pool.query(`INSERT INTO bare_messages (body) VALUES ${valuesList(rows.length)}`, [...rows]);
}

/**
 * A leaner one-statement checkpoint, measured as a proposal for
 * packages/store: like the store's commit (fenced UPDATE feeding the inserts),
 * but each tool result is stored once (in its message row; `tool_calls.result`
 * stays NULL) and tool calls are plain INSERTs (a tool-batch checkpoint only
 * adds new calls: no ON CONFLICT, so no speculative insertion). Meant for a
 * database where the runs UPDATE can be HOT ({@link makeRunsUpdateHot}).
 */
export const LEAN_COMMIT_SQL = `
WITH r AS (
  UPDATE runs
     SET last_checkpoint_at_message_index = last_checkpoint_at_message_index + $3,
         usage = $4::jsonb, updated_at = now()
   WHERE run_id = $1 AND epoch = $2 AND status = 'RUNNING'
  RETURNING last_checkpoint_at_message_index AS next
), m AS (
  INSERT INTO run_messages (run_id, idx, message)
  SELECT $1, r.next - $3 + v.ord - 1, v.message
    FROM r, jsonb_array_elements($5::jsonb) WITH ORDINALITY AS v(message, ord)
), t AS (
  INSERT INTO tool_calls (run_id, tool_call_id, name, args, result, status, batch,
                          idempotency_key, child_run_id, epoch, started_at, ended_at)
  SELECT $1, c.tool_call_id, c.name, c.args, NULL, c.status, c.batch,
         c.idempotency_key, c.child_run_id, $2, c.started_at, c.ended_at
    FROM r, jsonb_to_recordset($6::jsonb) AS c(tool_call_id text, name text, args jsonb,
         status text, batch int, idempotency_key text, child_run_id text,
         started_at timestamptz, ended_at timestamptz)
)
SELECT next FROM r`;

/** Runs {@link LEAN_COMMIT_SQL} for a delta; undefined when the epoch lost the run. */
export async function leanCommit(
  pool: pg.Pool,
  runId: string,
  epoch: number,
  delta: CheckpointDelta,
): Promise<number | undefined> {
  const calls = delta.toolCalls.map((c) => ({
    tool_call_id: c.toolCallId,
    name: c.name,
    args: c.args ?? null,
    status: c.status,
    batch: c.batch,
    idempotency_key: c.idempotencyKey,
    child_run_id: c.childRunId,
    started_at: c.startedAt,
    ended_at: c.endedAt,
  }));
  const { rows } = await pool.query<{ next: number }>(LEAN_COMMIT_SQL, [
    runId,
    epoch,
    delta.messages.length,
    JSON.stringify(delta.usage),
    JSON.stringify(delta.messages),
    JSON.stringify(calls),
  ]);
  return rows[0]?.next;
}

/**
 * Lets the checkpoint's UPDATE of `runs` be HOT (no new index entries): the
 * status index without `updated_at`, which every checkpoint changes, and free
 * room in each page. A proposal for packages/store, applied to a bench database.
 */
export async function makeRunsUpdateHot(pool: pg.Pool): Promise<void> {
  await pool.query('DROP INDEX runs_status_idx');
  await pool.query('CREATE INDEX runs_status_idx ON runs (status)');
  await pool.query('ALTER TABLE runs SET (fillfactor = 80)');
}
