import { sql } from 'kysely';
import type { Kysely } from 'kysely';

/**
 * Deadlines:
 * - `runs.deadline_at`: when the run must have ended (null: no deadline), set at its creation
 *   (`deadline_ms`, or its entity's `maxDurationMs`), copied from its team for a member run, moved
 *   by a continue that gives a new `deadline_ms`;
 * - `runs_deadline_idx`: top-level unfinished runs by deadline, so the reconciler's sweep of runs past
 *   theirs reads only those (a checkpoint changes neither `deadline_at` nor `status`);
 * - `served_entities.max_duration_ms`: the entity's `maxDurationMs` as workers announce it, the
 *   default deadline of the runs a producer creates of it.
 * Adding nullable columns rewrites no table.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table runs add column deadline_at timestamptz`.execute(db);
  await sql`create index runs_deadline_idx on runs (deadline_at)
    where deadline_at is not null and parent_run_id is null and status in ('PENDING', 'RUNNING', 'PAUSED')`.execute(
    db,
  );
  await sql`alter table served_entities add column max_duration_ms bigint check (max_duration_ms > 0)`.execute(
    db,
  );
}

/** Drops the index and the columns. */
export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table served_entities drop column max_duration_ms`.execute(db);
  await sql`drop index runs_deadline_idx`.execute(db);
  await sql`alter table runs drop column deadline_at`.execute(db);
}
