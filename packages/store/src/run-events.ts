import { sql } from 'kysely';
import type { Kysely } from 'kysely';
import { RunNotFoundError } from '@cairn/engine';
import type { Database, RunCommitRow } from './schema.js';
import { insertCommit } from './run-commits.js';
import { eventOfBatch, type NewRunEvent } from './stored-delta-events.js';

/** An event of a run's stream, numbered from 1 per run. */
export interface StoredEvent {
  runId: string;
  seq: number;
  type: string;
  data: unknown;
  createdAt: Date;
}

/**
 * Appends events in order, in one statement: it advances the run's
 * `event_seq` (the row lock orders concurrent appends and the checkpoint and
 * finish statements, which store an execution's own events) and inserts the
 * events after it (one `run_commits` row). Returns the last sequence number written; throws
 * `RunNotFoundError`.
 */
export async function appendEvents(
  db: Kysely<Database>,
  runId: string,
  events: readonly NewRunEvent[],
): Promise<number> {
  if (events.length === 0) throw new RangeError('appendEvents needs at least one event');
  const { rows } = await sql<{ seq: number }>`
    with run as (
      update runs set event_seq = event_seq + ${events.length} where run_id = ${runId}
      returning run_id, event_seq, last_checkpoint_at_message_index
    )
    ${insertCommit([], events)}
    returning last_seq as seq`.execute(db);
  if (rows.length === 0) throw new RunNotFoundError(runId);
  return rows[0]!.seq;
}

/** The `run_commits` columns a stored event is read from. */
export type EventRow = Pick<RunCommitRow, 'run_id' | 'first_seq' | 'events' | 'created_at'>;

/**
 * The run's events with `seq > afterSeq`, in order, at most `limit` of them:
 * only the rows ending after the cursor are read, by the primary key, and a
 * row holds at least one event after it, so `limit` rows are enough.
 */
export async function listEvents(
  db: Kysely<Database>,
  runId: string,
  afterSeq = 0,
  limit?: number,
): Promise<StoredEvent[]> {
  let query = db
    .selectFrom('run_commits')
    .select(['run_id', 'first_seq', 'events', 'created_at'])
    .where('run_id', '=', runId)
    .where('last_seq', '>', afterSeq)
    .where('events', 'is not', null)
    .orderBy('last_seq')
    .orderBy('end_idx');
  if (limit !== undefined) query = query.limit(limit);
  const events = eventsOfRows(await query.execute()).filter((e) => e.seq > afterSeq);
  return limit === undefined ? events : events.slice(0, limit);
}

/** The run's events of the given types, in order (e.g. its checkpoints, for a timeline). */
export async function listEventsOfTypes(
  db: Kysely<Database>,
  runId: string,
  types: readonly string[],
): Promise<StoredEvent[]> {
  if (types.length === 0) return [];
  const rows = await db
    .selectFrom('run_commits')
    .select(['run_id', 'first_seq', 'events', 'created_at'])
    .where('run_id', '=', runId)
    .where('events', 'is not', null)
    .orderBy('last_seq')
    .orderBy('end_idx')
    .execute();
  return eventsOfRows(rows).filter((e) => types.includes(e.type));
}

/**
 * The events `run_commits` rows hold, numbered, in the rows' order: read in Node from each row's
 * one `json` value (the `run_events` view unpacks them in SQL, a parse per operator).
 */
export function eventsOfRows(rows: readonly EventRow[]): StoredEvent[] {
  return rows.flatMap((row) => {
    const batch = row.events ?? [];
    return batch.map((element, i) => ({
      runId: row.run_id,
      seq: row.first_seq + i,
      ...eventOfBatch(element, batch[0]),
      createdAt: row.created_at,
    }));
  });
}
