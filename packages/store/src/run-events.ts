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

/** Appends an event with `seq = max(seq) + 1` for the run, retrying when a concurrent append took that number. */
export async function appendEvent(
  db: Kysely<Database>,
  runId: string,
  event: NewRunEvent,
): Promise<number> {
  const data = JSON.stringify(event.data ?? null);
  for (let attempt = 1; ; attempt++) {
    try {
      const row = await db
        .insertInto('run_events')
        .columns(['run_id', 'seq', 'type', 'data'])
        .expression(
          db
            .selectFrom('run_events')
            .select([
              sql<string>`${runId}::text`.as('run_id'),
              sql<number>`coalesce(max(seq), 0) + 1`.as('seq'),
              sql<string>`${event.type}::text`.as('type'),
              sql<string>`${data}::jsonb`.as('data'),
            ])
            .where('run_id', '=', runId),
        )
        .returning('seq')
        .executeTakeFirstOrThrow();
      return row.seq;
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
