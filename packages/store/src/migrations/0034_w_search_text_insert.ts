import { sql } from 'kysely';
import type { Kysely } from 'kysely';

/**
 * A run's search text written by a plain insert (issue #29, storage): the
 * trigger of 0015_a inserted with `on conflict (run_id) do nothing` (a
 * speculative insert: a 48 B confirm record more) and the row's foreign key
 * share-locked the new run (a 54 B lock record). The trigger fires once per
 * new run, whose id is the runs' primary key, so no row can be there already;
 * a deleted run's text goes with it by a statement trigger, as its
 * `run_commits` rows do.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create or replace function runs_search_text() returns trigger language plpgsql as $$
    begin
      insert into run_search_texts (run_id, input_head) values (new.run_id, left(new.input, 2000));
      return null;
    end $$`.execute(db);
  await sql`create function run_search_texts_of_deleted_runs() returns trigger language plpgsql as $$
    begin
      delete from run_search_texts s using deleted_runs d where s.run_id = d.run_id;
      return null;
    end $$`.execute(db);
  await sql`create trigger runs_delete_search_texts after delete on runs
    referencing old table as deleted_runs
    for each statement execute function run_search_texts_of_deleted_runs()`.execute(db);
  await sql`alter table run_search_texts drop constraint run_search_texts_run_id_fkey`.execute(db);
}

/** Puts the foreign key and the insert of 0015_a back. */
export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`delete from run_search_texts s where not exists (select 1 from runs r where r.run_id = s.run_id)`.execute(
    db,
  );
  await sql`alter table run_search_texts add constraint run_search_texts_run_id_fkey
    foreign key (run_id) references runs (run_id) on delete cascade`.execute(db);
  await sql`drop trigger runs_delete_search_texts on runs`.execute(db);
  await sql`drop function run_search_texts_of_deleted_runs()`.execute(db);
  await sql`create or replace function runs_search_text() returns trigger language plpgsql as $$
    begin
      insert into run_search_texts (run_id, input_head) values (new.run_id, left(new.input, 2000))
        on conflict (run_id) do nothing;
      return null;
    end $$`.execute(db);
}
