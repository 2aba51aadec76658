import { sql } from 'kysely';
import type { Kysely } from 'kysely';
import type { Database } from './schema.js';

/** An event to append to a run's stream. */
export interface NewRunEvent {
  type: string;
  data: unknown;
}

/** An event of a run's stream, numbered from 1 per run. */
export interface StoredEvent {
  runId: string;
  seq: number;
  type: string;
  data: unknown;
  createdAt: Date;
}

const UNIQUE_VIOLATION = '23505';
const MAX_TRIES = 10;

/**
 * Appends events in order with `seq = max(seq) + 1, + 2, ...` for the run, in
 * one statement, retrying when a concurrent append took those numbers.
 * Returns the last sequence number written.
 */
export async function appendEvents(
  db: Kysely<Database>,
  runId: string,
  events: readonly NewRunEvent[],
): Promise<number> {
  if (events.length === 0) throw new RangeError('appendEvents needs at least one event');
  const types = events.map((e) => e.type);
  const data = events.map((e) => JSON.stringify(e.data ?? null));
  for (let attempt = 1; ; attempt++) {
    try {
      const { rows } = await sql<{ seq: number }>`
        insert into run_events (run_id, seq, type, data)
        select ${runId}, base.seq + e.ord, e.type, e.data::jsonb
        from (select coalesce(max(seq), 0) as seq from run_events where run_id = ${runId}) as base,
             unnest(${types}::text[], ${data}::text[]) with ordinality as e(type, data, ord)
        order by e.ord
        returning seq`.execute(db);
      return Math.max(...rows.map((r) => r.seq));
    } catch (error) {
      if (attempt >= MAX_TRIES || !isUniqueViolation(error)) throw error;
    }
  }
}

/** The run's events with `seq > afterSeq`, in order, at most `limit` of them. */
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
    .where('seq', '>', afterSeq)
    .orderBy('seq');
  if (limit !== undefined) query = query.limit(limit);
  const rows = await query.execute();
  return rows.map((r) => ({
    runId: r.run_id,
    seq: r.seq,
    type: r.type,
    data: r.data,
    createdAt: r.created_at,
  }));
}

function isUniqueViolation(error: unknown): boolean {
  return (
    typeof error === 'object' &&
    error !== null &&
    (error as { code?: unknown }).code === UNIQUE_VIOLATION
  );
}
