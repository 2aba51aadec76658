import { sql } from 'kysely';
import type { Kysely } from 'kysely';
import { RunNotFoundError } from '@cairn/engine';
import type { Database, RunEventRow } from './schema.js';
import { insertCommit } from './run-commits.js';
import { derivedEventData, type NewRunEvent } from './stored-delta-events.js';

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

/**
 * The run's events with `seq > afterSeq`, in order, at most `limit` of them
 * (only the batches ending after the cursor are read, by the primary key).
 */
export async function listEvents(
  db: Kysely<Database>,
  runId: string,
  afterSeq = 0,
  limit?: number,
): Promise<StoredEvent[]> {
  let query = db
    .selectFrom('run_events')
    .selectAll()
    .where('run_id', '=', runId)
    .where('batch_last_seq', '>', afterSeq)
    .where('seq', '>', afterSeq)
    // By batch first: an incremental sort over the primary key, so a limit reads only the batches it needs.
    .orderBy('batch_last_seq')
    .orderBy('seq');
  if (limit !== undefined) query = query.limit(limit);
  const rows = await query.execute();
  return rows.map(fromEventRow);
}

/** The run's events of the given types, in order (e.g. its checkpoints, for a timeline). */
export async function listEventsOfTypes(
  db: Kysely<Database>,
  runId: string,
  types: readonly string[],
): Promise<StoredEvent[]> {
  if (types.length === 0) return [];
  const rows = await db
    .selectFrom('run_events')
    .selectAll()
    .where('run_id', '=', runId)
    .where('type', 'in', types)
    .orderBy('seq')
    .execute();
  return rows.map(fromEventRow);
}

/** A `run_events` row as a {@link StoredEvent}; a derived event stored compact is made whole. */
export function fromEventRow(r: RunEventRow): StoredEvent {
  const data =
    typeof r.data === 'string' && r.batch_epoch !== null && r.batch_at !== null
      ? derivedEventData(r.data, r.batch_epoch, r.batch_at)
      : r.data;
  return { runId: r.run_id, seq: r.seq, type: r.type, data, createdAt: r.created_at };
}
