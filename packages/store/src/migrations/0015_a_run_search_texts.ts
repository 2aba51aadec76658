import { sql } from 'kysely';
import type { Kysely } from 'kysely';

/**
 * The run list's text search, off the runs table (issue #22, the hot path):
 * the trigram index of 0013_l sat on `runs`, whose claims and finishes change
 * indexed columns, so every one of them re-inserted the input's trigrams
 * (about 1.2 KB of WAL each, 3.6 KB per run). The searched text now lives in
 * `run_search_texts`, one row per top-level run written once, by a trigger
 * on the run's insert (every path that creates a run, SQL included), and
 * never updated; its trigram index is written once per run.
 * - `input_head`: the first 2,000 characters of the input (`SEARCHED_INPUT_CHARS`).
 * - Deleted with its run (cascade).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create table run_search_texts (
    run_id text primary key references runs (run_id) on delete cascade,
    input_head text not null
  )`.execute(db);
  await sql`create function runs_search_text() returns trigger language plpgsql as $$
    begin
      insert into run_search_texts (run_id, input_head) values (new.run_id, left(new.input, 2000))
        on conflict (run_id) do nothing;
      return null;
    end $$`.execute(db);
  await sql`create trigger runs_search_text after insert on runs
    for each row when (new.parent_run_id is null) execute function runs_search_text()`.execute(db);
  // Filled after the trigger exists: a run created meanwhile by a process still running is not missed.
  await sql`insert into run_search_texts (run_id, input_head)
    select run_id, left(input, 2000) from runs where parent_run_id is null
    on conflict (run_id) do nothing`.execute(db);
  await sql`create index run_search_texts_trgm_idx on run_search_texts
    using gin (input_head gin_trgm_ops)`.execute(db);
  await sql`drop index if exists runs_top_level_input_trgm_idx`.execute(db);
  await sql`drop statistics if exists runs_input_head_stats`.execute(db);
  await sql`analyze run_search_texts`.execute(db);
}

/** Puts the search back on `runs`. */
export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`create index if not exists runs_top_level_input_trgm_idx on runs
    using gin (left(input, 2000) gin_trgm_ops) where parent_run_id is null`.execute(db);
  await sql`create statistics if not exists runs_input_head_stats on (left(input, 2000)) from runs`.execute(
    db,
  );
  await sql`drop trigger runs_search_text on runs`.execute(db);
  await sql`drop function runs_search_text()`.execute(db);
  await sql`drop table run_search_texts`.execute(db);
}
