import { sql, type RawBuilder } from 'kysely';
import type { Message } from '@cairn/engine';
import type { BatchElement, NewRunEvent } from './stored-delta-events.js';

/**
 * The most messages one `run_commits` row holds: a bigger write stores several rows, so a page of
 * messages reads a bounded row at each edge (migration `0019_run_commits`).
 */
export const MESSAGES_PER_COMMIT_ROW = 64;

/** The `run_commits` columns a write inserts, in the order {@link commitRows} selects them. */
const COLUMNS = sql.raw(
  'run_id, last_seq, end_idx, first_seq, first_idx, messages, events, calls, pad',
);

/**
 * Postgres compresses a row's values only once the row passes about 2 KB (`TOAST_TUPLE_THRESHOLD`,
 * fixed when Postgres is built; `toast_tuple_target` does not lower it), and most writes are
 * smaller. A row whose values hold at least {@link PAD_FROM_BYTES} is lifted past it by `pad`,
 * spaces up to {@link PAD_TO_BYTES} in all, and Postgres then compresses every value of the row
 * (migration `0022_compressed_commits`): JSON to about half, the spaces to a few bytes.
 */
const PAD_TO_BYTES = 2_048;
/** Below this, compression saves less than the padding's few compressed bytes cost. */
const PAD_FROM_BYTES = 384;

/** How many spaces a row whose values take `bytes` is padded with (0: none). */
export function padOf(bytes: number): number {
  return bytes >= PAD_FROM_BYTES && bytes < PAD_TO_BYTES ? PAD_TO_BYTES - bytes : 0;
}

/**
 * The rows of one write, as the INSERT into `run_commits` that follows a CTE (or a from-item)
 * named `run` returning `run_id`, `event_seq` and `last_checkpoint_at_message_index` as they are
 * after the write: its `messages` end at that index, its `events` at that seq. The messages go in
 * rows of {@link MESSAGES_PER_COMMIT_ROW}, the events in the last row, `calls` (an expression of
 * the write's calls stored final, `write-delta.ts`) in the first; a write of events alone is one
 * row. Nothing is inserted when messages and events are both empty (a write that stores a row
 * may carry calls, of about `callsBytes` as JSON). Each row is padded as {@link padOf} says. The
 * statement's text is the same whatever the write holds, so its prepared plan is shared.
 */
export function insertCommit(
  messages: readonly Message[],
  events: readonly BatchElement[],
  run: RawBuilder<unknown> = sql`run`,
  calls: RawBuilder<unknown> = sql`null`,
  callsBytes = 0,
): RawBuilder<Record<string, unknown>> {
  const rows = commitRowsOf(messages);
  if (rows.length === 0 && events.length > 0) rows.push({ lo: 0, hi: 0, messages: null });
  const n = messages.length;
  const k = events.length;
  const last = rows.length;
  const storedEvents = k > 0 ? eventsJson(events) : null;
  const pads = rows.map((r, i) =>
    padOf(
      (r.messages === null ? 0 : Buffer.byteLength(r.messages)) +
        (i === last - 1 && storedEvents !== null ? Buffer.byteLength(storedEvents) : 0) +
        (i === 0 ? callsBytes : 0),
    ),
  );
  return sql<Record<string, unknown>>`insert into run_commits (${COLUMNS})
    select run.run_id,
           run.event_seq - case when c.ord = ${last} then 0 else ${k}::int end,
           run.last_checkpoint_at_message_index - ${n}::int + c.hi,
           run.event_seq - ${k}::int + 1,
           run.last_checkpoint_at_message_index - ${n}::int + c.lo,
           c.messages::json,
           case when c.ord = ${last} and ${k}::int > 0 then ${storedEvents}::json end,
           case when c.ord = 1 then ${calls}::json end,
           case when c.pad > 0 then repeat(' ', c.pad) end
      from ${run}, unnest(${rows.map((r) => r.lo)}::int[], ${rows.map((r) => r.hi)}::int[], ${rows.map(
        (r) => r.messages,
      )}::text[], ${pads}::int[]) with ordinality as c(lo, hi, messages, pad, ord)`;
}

/** One row's share of a write's messages: `[lo, hi)` of them, as JSON text. */
interface CommitRow {
  lo: number;
  hi: number;
  messages: string | null;
}

function commitRowsOf(messages: readonly Message[]): CommitRow[] {
  const rows: CommitRow[] = [];
  for (let lo = 0; lo < messages.length; lo += MESSAGES_PER_COMMIT_ROW) {
    const hi = Math.min(lo + MESSAGES_PER_COMMIT_ROW, messages.length);
    rows.push({ lo, hi, messages: JSON.stringify(messages.slice(lo, hi)) });
  }
  return rows;
}

/** A write's events as its row stores them: each whole `{ type, data }` or a derived event's compact string. */
function eventsJson(events: readonly BatchElement[]): string {
  return JSON.stringify(
    events.map((e) =>
      typeof e === 'string' ? e : { type: e.type, data: (e as NewRunEvent).data ?? null },
    ),
  );
}
