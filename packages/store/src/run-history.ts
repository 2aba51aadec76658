import { sql, type RawBuilder } from 'kysely';
import type { Kysely } from 'kysely';
import type { CheckpointRecord, Message } from '@cairn/engine';
import { MAX_INTEGER_COLUMN } from './integer-column.js';
import type { Database } from './schema.js';

/** A message with its position in the run's history. */
export interface IndexedMessage {
  index: number;
  message: Message;
}

/** Past any message index (an integer column). */
const NO_END = MAX_INTEGER_COLUMN;

/**
 * The segments a run's history is read from, as a recursive CTE body:
 * `(run_id, lo, hi)`, each run's own messages `[lo, hi)`. A run that is not
 * a fork is one segment `[0, end)`; a fork's own messages start at its
 * `shared_history_length`, and the messages before it are its source's
 * (itself perhaps a fork) up to that length.
 */
function historySegments(runId: string, end: number): RawBuilder<unknown> {
  return sql`
    with recursive segments (run_id, lo, hi, source) as (
      select run_id, coalesce(shared_history_length, 0), ${end}::integer, shared_history_run_id
        from runs where run_id = ${runId}
      union all
      select r.run_id, coalesce(r.shared_history_length, 0), least(s.lo, s.hi), r.shared_history_run_id
        from runs r join segments s on r.run_id = s.source
    )`;
}

/**
 * Messages `[from, to)` of a run's history in order, the shared part of a
 * fork's read through its source: one statement, each segment the
 * `run_commits` rows overlapping it, by the primary key's run prefix.
 */
export async function readHistory(
  db: Kysely<Database>,
  runId: string,
  range: { from?: number; to?: number; limit?: number } = {},
): Promise<IndexedMessage[]> {
  const rows = await readHistoryRows(db, runId, range);
  return rows.map((r) => ({ index: r.idx, message: r.message }));
}

/** {@link readHistory}'s rows, with when each message was stored (its write's `now()`, to the microsecond, as text). */
async function readHistoryRows(
  db: Kysely<Database>,
  runId: string,
  range: { from?: number; to?: number; limit?: number },
): Promise<{ idx: number; message: Message; written: string }[]> {
  const from = range.from ?? 0;
  // Rows, not messages: each row holds at least one message of the range, so `limit` rows are enough.
  // A fork's segments in history order (its source's first), each run's rows in key order.
  const { rows } = await sql<{
    lo: number;
    hi: number;
    first_idx: number;
    messages: Message[];
    written: string;
  }>`
    ${historySegments(runId, range.to ?? NO_END)}
    select greatest(s.lo, ${from}::integer) as lo, s.hi, c.first_idx, c.messages, c.created_at::text as written
      from segments s
      join run_commits c on c.run_id = s.run_id and c.messages is not null
                        and c.end_idx > greatest(s.lo, ${from}::integer) and c.first_idx < s.hi
     order by s.lo, c.last_seq, c.end_idx
     ${range.limit === undefined ? sql`` : sql`limit ${range.limit}`}`.execute(db);
  const messages: { idx: number; message: Message; written: string }[] = [];
  for (const row of rows) {
    row.messages.forEach((message, i) => {
      const idx = row.first_idx + i;
      if (idx >= row.lo && idx < row.hi) messages.push({ idx, message, written: row.written });
    });
  }
  return range.limit === undefined ? messages : messages.slice(0, range.limit);
}

/**
 * Every committed checkpoint of a run's history, in order (a fork's begin
 * with its source's up to its point). A checkpoint is one write that stored
 * messages: its messages share the transaction's `created_at`; its epoch is
 * that of the claim that made the write (0: the run's creation). Reads the
 * keys and times of the run's `run_commits` rows, no message bodies.
 */
export async function listCheckpoints(
  db: Kysely<Database>,
  runId: string,
): Promise<CheckpointRecord[]> {
  const { rows } = await sql<{ message_index: number; at: Date; epoch: number }>`
    ${historySegments(runId, NO_END)}
    , writes as (
      select s.run_id, c.created_at as at, least(max(c.end_idx), min(s.hi)) as message_index
        from segments s
        join run_commits c on c.run_id = s.run_id and c.first_idx < c.end_idx
                          and c.end_idx > s.lo and c.first_idx < s.hi
       group by s.run_id, c.created_at
    )
    select w.message_index, w.at,
           coalesce((select max(a.epoch) from run_attempts a
                      where a.run_id = w.run_id and a.started_at <= w.at), 0) as epoch
      from writes w
     order by w.message_index`.execute(db);
  return rows.map((r, i) => ({
    seq: i + 1,
    messageIndex: r.message_index,
    at: r.at,
    epoch: r.epoch,
  }));
}

/**
 * The number (1-based) of the run's checkpoint that ends at `messageIndex`,
 * or undefined when none does (`committed`: the run's committed message
 * count). Whether one ends there is read from two rows by the primary key;
 * its number counts the writes before it (no message bodies are read).
 */
export async function checkpointEndingAt(
  db: Kysely<Database>,
  runId: string,
  messageIndex: number,
  committed: number,
): Promise<number | undefined> {
  if (!Number.isInteger(messageIndex) || messageIndex < 1 || messageIndex > committed)
    return undefined;
  if (messageIndex < committed) {
    const around = await readHistoryRows(db, runId, {
      from: messageIndex - 1,
      to: messageIndex + 1,
    });
    if (around.length !== 2 || around[0]!.written === around[1]!.written) return undefined;
  }
  const { rows } = await sql<{ n: string }>`
    ${historySegments(runId, messageIndex)}
    select count(*) as n from (
      select distinct s.run_id, c.created_at
        from segments s
        join run_commits c on c.run_id = s.run_id and c.first_idx < c.end_idx
                          and c.end_idx > s.lo and c.first_idx < s.hi
    ) writes`.execute(db);
  return Number(rows[0]?.n ?? 0);
}
