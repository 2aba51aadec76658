import { sql } from 'kysely';
import type { Kysely } from 'kysely';

/**
 * What the bench's 512 filter and sort combinations of the run list showed
 * after 0013_l_run_list_search (100,000 runs):
 * - Statistics on `left(input, 2000)`, the expression the text search reads.
 *   Its trigram index is partial (top-level runs), and Postgres does not
 *   estimate from a partial index's expression: without these it takes any
 *   `ilike '%word%'` for a handful of rows, and reads every run holding a
 *   common word through the trigram index before filtering them (up to
 *   250 ms) instead of walking the sort's or another filter's index.
 *   Expression statistics need Postgres 14 or later.
 * - Held runs (PAUSED, or parked for capacity) in one partial index in the
 *   status sort's order, replacing the parked runs' index: the planner
 *   otherwise walks every run in status order for the few held ones.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create statistics if not exists runs_input_head_stats on (left(input, 2000)) from runs`.execute(
    db,
  );
  await sql`create index runs_top_level_held_idx on runs (status, updated_at, run_id)
    where parent_run_id is null and (status = 'PAUSED' or waiting is not null)`.execute(db);
  await sql`drop index if exists runs_top_level_waiting_idx`.execute(db);
  await sql`analyze runs`.execute(db);
}

/** Drops the statistics and the held runs' index, and puts the parked runs' index back. */
export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`create index if not exists runs_top_level_waiting_idx on runs (created_at)
    where waiting is not null and parent_run_id is null`.execute(db);
  await sql`drop index if exists runs_top_level_held_idx`.execute(db);
  await sql`drop statistics if exists runs_input_head_stats`.execute(db);
}
