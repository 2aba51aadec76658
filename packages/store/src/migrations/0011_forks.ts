import { sql } from 'kysely';
import type { Kysely } from 'kysely';

/**
 * Forks at a checkpoint (docs/forks-and-replay.md "Forks: time travel at a checkpoint"):
 * - `runs.shared_history_run_id`, `runs.shared_history_length`: a fork's history up to its point is
 *   the first `length` messages of that run's history, read through it, never copied (a fork of a
 *   5,000-message run writes none of them); the fork's own messages follow at indices from `length`.
 *   The foreign key keeps a source for as long as a fork reads through it (retention skips it;
 *   deleting it with the fork in one statement is allowed).
 * - `runs.forked_from`: `{ run_id, checkpoint, message_index }` as the run view shows it.
 * - `runs_shared_history_idx`: a run's forks, for its page and for retention.
 * Adding nullable columns rewrites no table.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  // Constraints added NOT VALID, then validated: the scan of existing rows takes no lock that blocks writes.
  await sql`alter table runs
    add column shared_history_run_id text,
    add column shared_history_length integer,
    add column forked_from jsonb,
    add constraint runs_shared_history_run_id_fkey
      foreign key (shared_history_run_id) references runs (run_id) not valid,
    add constraint runs_shared_history_check
      check ((shared_history_run_id is null) = (shared_history_length is null)
             and (shared_history_length is null or shared_history_length >= 0)) not valid`.execute(
    db,
  );
  await sql`alter table runs validate constraint runs_shared_history_run_id_fkey`.execute(db);
  await sql`alter table runs validate constraint runs_shared_history_check`.execute(db);
  await sql`create index runs_shared_history_idx on runs (shared_history_run_id)
    where shared_history_run_id is not null`.execute(db);
}

/** Drops the index and the columns. */
export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop index runs_shared_history_idx`.execute(db);
  await sql`alter table runs
    drop constraint runs_shared_history_check,
    drop constraint runs_shared_history_run_id_fkey,
    drop column forked_from,
    drop column shared_history_length,
    drop column shared_history_run_id`.execute(db);
}
