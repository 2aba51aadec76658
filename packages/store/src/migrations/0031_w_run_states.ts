import { sql } from 'kysely';
import type { Kysely } from 'kysely';

/** The indexes this migration moves from `runs` to `run_states`, as 0005_b, 0007_e, 0010_a, 0013_l and 0014_o made them. */
const RUNS_INDEXES = [
  sql`create index if not exists runs_status_idx on runs (status)`,
  sql`create index if not exists runs_top_level_status_updated_idx on runs (status, updated_at) where parent_run_id is null`,
  sql`create index if not exists runs_top_level_updated_idx on runs (updated_at, run_id) where parent_run_id is null`,
  sql`create index if not exists runs_top_level_unfinished_idx on runs (status, tenant_id)
    where parent_run_id is null and status in ('PENDING', 'RUNNING', 'PAUSED')`,
  sql`create index if not exists runs_top_level_held_idx on runs (status, updated_at, run_id)
    where parent_run_id is null and (status = 'PAUSED' or waiting is not null)`,
  sql`create index if not exists runs_deadline_idx on runs (deadline_at)
    where deadline_at is not null and parent_run_id is null and status in ('PENDING', 'RUNNING', 'PAUSED')`,
];

/**
 * A claim and a finish that are HOT (issue #29, storage): each changes a run's
 * `status` and `updated_at`, which six indexes of `runs` keyed or filtered on,
 * so neither update could be heap-only and each wrote an entry in all of the
 * table's indexes (about 1.6 KB of WAL per run). Those six indexes now sit on
 * `run_states`, a narrow copy of the lifecycle columns that the list, overview,
 * reconciler, deadline and retention reads join; `runs` keeps no index on a
 * column the lifecycle moves, so its updates stay on their page.
 * - `run_states` is written by triggers on `runs` (every path that creates or
 *   moves a run, SQL included): a row on insert, an update when the status,
 *   `updated_at`, whether the run waits for capacity, or the deadline changed.
 * - Deleted with its run (a statement trigger, as `run_commits`: no foreign key
 *   to check on each insert).
 * - `runs` gets `fillfactor = 90`: room on each page for the claim's and the
 *   finish's new row versions, which a HOT update needs.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create table run_states (
    run_id text primary key,
    status text not null,
    updated_at timestamptz not null,
    top_level boolean not null,
    tenant_id text,
    waiting boolean not null,
    deadline_at timestamptz
  )`.execute(db);
  await sql`create function run_states_write() returns trigger language plpgsql as $$
    begin
      if tg_op = 'INSERT' then
        insert into run_states (run_id, status, updated_at, top_level, tenant_id, waiting, deadline_at)
          values (new.run_id, new.status, new.updated_at, new.parent_run_id is null, new.tenant_id,
                  new.waiting is not null, new.deadline_at);
      else
        update run_states
           set status = new.status, updated_at = new.updated_at, waiting = new.waiting is not null,
               deadline_at = new.deadline_at
         where run_id = new.run_id;
      end if;
      return null;
    end $$`.execute(db);
  await sql`create trigger runs_state_insert after insert on runs
    for each row execute function run_states_write()`.execute(db);
  await sql`create trigger runs_state_update after update of status, updated_at, waiting, deadline_at on runs
    for each row when (old.status is distinct from new.status or old.updated_at is distinct from new.updated_at
      or (old.waiting is null) <> (new.waiting is null) or old.deadline_at is distinct from new.deadline_at)
    execute function run_states_write()`.execute(db);
  await sql`create function run_states_of_deleted_runs() returns trigger language plpgsql as $$
    begin
      delete from run_states s using deleted_runs d where s.run_id = d.run_id;
      return null;
    end $$`.execute(db);
  await sql`create trigger runs_delete_states after delete on runs
    referencing old table as deleted_runs
    for each statement execute function run_states_of_deleted_runs()`.execute(db);
  // Filled after the triggers exist, under a lock that holds writers off until the copy commits.
  await sql`lock table runs in share row exclusive mode`.execute(db);
  await sql`insert into run_states (run_id, status, updated_at, top_level, tenant_id, waiting, deadline_at)
    select run_id, status, updated_at, parent_run_id is null, tenant_id, waiting is not null, deadline_at
      from runs`.execute(db);
  // `runs_status_idx` (status) served one read over member runs too, the count of PAUSED runs (the
  // `cairn_runs_paused` gauge): a partial index that a run's usual lifecycle never writes.
  await sql`create index run_states_paused_idx on run_states (status) where status = 'PAUSED'`.execute(
    db,
  );
  await sql`create index run_states_top_level_status_updated_idx on run_states (status, updated_at)
    where top_level`.execute(db);
  await sql`create index run_states_top_level_updated_idx on run_states (updated_at, run_id)
    where top_level`.execute(db);
  await sql`create index run_states_top_level_unfinished_idx on run_states (status, tenant_id)
    where top_level and status in ('PENDING', 'RUNNING', 'PAUSED')`.execute(db);
  await sql`create index run_states_top_level_held_idx on run_states (status, updated_at, run_id)
    where top_level and (status = 'PAUSED' or waiting)`.execute(db);
  await sql`create index run_states_deadline_idx on run_states (deadline_at)
    where deadline_at is not null and top_level and status in ('PENDING', 'RUNNING', 'PAUSED')`.execute(
    db,
  );
  for (const name of [
    'runs_status_idx',
    'runs_top_level_status_updated_idx',
    'runs_top_level_updated_idx',
    'runs_top_level_unfinished_idx',
    'runs_top_level_held_idx',
    'runs_deadline_idx',
  ])
    await sql`drop index if exists ${sql.id(name)}`.execute(db);
  await sql`alter table runs set (fillfactor = 90)`.execute(db);
  await sql`analyze run_states`.execute(db);
}

/** Puts the indexes back on `runs` and drops `run_states`. */
export async function down(db: Kysely<unknown>): Promise<void> {
  for (const index of RUNS_INDEXES) await index.execute(db);
  await sql`alter table runs reset (fillfactor)`.execute(db);
  await sql`drop trigger runs_delete_states on runs`.execute(db);
  await sql`drop trigger runs_state_update on runs`.execute(db);
  await sql`drop trigger runs_state_insert on runs`.execute(db);
  await sql`drop function run_states_of_deleted_runs()`.execute(db);
  await sql`drop function run_states_write()`.execute(db);
  await sql`drop table run_states`.execute(db);
}
