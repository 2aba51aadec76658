import { sql } from 'kysely';
import type { Kysely } from 'kysely';

/**
 * `runs_parent_run_id_idx` holds member runs only (`where parent_run_id is not null`): a top-level run,
 * most of them, takes no entry on its insert, claim and finish. Its readers look a member run up by
 * `parent_run_id = <run>` (member runs of a run, the recursive walks of a tree, the foreign key's check
 * on delete), which implies the predicate; the top-level lists read the `runs_top_level_*` indexes.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`drop index runs_parent_run_id_idx`.execute(db);
  await sql`create index runs_parent_run_id_idx on runs (parent_run_id, created_at)
    where parent_run_id is not null`.execute(db);
}

/** Restores the whole index. */
export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop index runs_parent_run_id_idx`.execute(db);
  await sql`create index runs_parent_run_id_idx on runs (parent_run_id, created_at)`.execute(db);
}
