import { sql } from 'kysely';
import type { Kysely } from 'kysely';
import { up as derivedEventsView } from './0018_derived_events.js';

/**
 * One row per durable write (issue #29): `run_commits` holds what a write of a run stored, its
 * messages and its events, in place of a row per message (`run_messages`) and a row per event
 * batch (`run_event_batches`):
 * - `messages`: the write's messages `first_idx..end_idx - 1`, one JSON array (null: none), at
 *   most 64 a row: a bigger write stores several rows in its one statement;
 * - `events`: the write's events `first_seq..last_seq`, as `run_event_batches` held them (whole,
 *   or a derived event's compact string, migration 0018; null: none), in its last row;
 * - `json`, not `jsonb`: the text as written, smaller, and compressed by Postgres once a row
 *   passes ~2 KB (a checkpoint's messages and events together mostly do);
 * - keyed `(run_id, last_seq, end_idx)`: both only grow from one write to the next (the run's row
 *   lock orders them), so the key orders a run's writes; an event cursor seeks by `last_seq`,
 *   a message range filters the run's keys by `end_idx`;
 * - no foreign key: every write inserts its row in the statement that updates (or inserts) the
 *   run's row, so the run is there; a foreign key would add a check and a row lock of the run
 *   (54 B of WAL) to every write. A statement trigger deletes a deleted run's rows, as the
 *   cascade did (retention, session delete, a team's member runs).
 * `run_messages` and `run_events` become views of it, so their readers read as before; the
 * store's range readers bound `commit_first_idx`/`commit_end_idx` and `batch_last_seq`.
 * Existing rows move: each write of messages (the rows of one run with one `created_at`) becomes
 * rows of at most 64, each event batch a row of its own; both keep their times.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create table run_commits (
    run_id text not null,
    last_seq integer not null,
    end_idx integer not null,
    first_seq integer not null,
    first_idx integer not null,
    messages json,
    events json,
    created_at timestamptz not null default now(),
    constraint run_commits_pkey primary key (run_id, last_seq, end_idx),
    constraint run_commits_ranges_check check (
      first_idx >= 0 and first_idx <= end_idx and first_seq >= 1 and first_seq <= last_seq + 1
      and (messages is not null or events is not null))
  )`.execute(db);
  // Each write of messages and each event batch placed in its run's order of time (a write's
  // messages before the events of its own transaction): a write of messages is numbered by the
  // events stored before it, a batch by the messages stored up to it. One pass per run (window
  // functions), whatever its length.
  await sql`create temporary table run_commit_marks on commit drop as
    with marks as (
      select run_id, created_at, 0 as kind, max(idx) + 1 as end_idx, null::integer as last_seq
        from run_messages group by run_id, created_at
      union all
      select run_id, created_at, 1, null, last_seq from run_event_batches)
    select run_id, created_at, kind, last_seq,
           coalesce(max(last_seq) over before_it, 0) as prior_seq,
           coalesce(max(end_idx) over before_it, 0) as upto_idx
      from marks
    window before_it as (partition by run_id order by created_at, kind, last_seq
                         rows between unbounded preceding and 1 preceding)`.execute(db);
  // A write of messages: its rows of 64.
  await sql`insert into run_commits (run_id, last_seq, end_idx, first_seq, first_idx, messages, created_at)
    select w.run_id, p.prior_seq, max(w.idx) + 1, p.prior_seq + 1, min(w.idx),
           json_agg(w.message order by w.idx), w.created_at
      from (select m.*, (m.idx - min(m.idx) over (partition by m.run_id, m.created_at)) / 64 as part
              from run_messages m) w
      join run_commit_marks p on p.run_id = w.run_id and p.created_at = w.created_at and p.kind = 0
     group by w.run_id, w.created_at, w.part, p.prior_seq`.execute(db);
  // An event batch: a row of its own.
  await sql`insert into run_commits (run_id, last_seq, end_idx, first_seq, first_idx, events, created_at)
    select b.run_id, b.last_seq, p.upto_idx, b.first_seq, p.upto_idx, b.events::json, b.created_at
      from run_event_batches b
      join run_commit_marks p on p.run_id = b.run_id and p.kind = 1 and p.last_seq = b.last_seq`.execute(
    db,
  );
  await sql`create function run_commits_of_deleted_runs() returns trigger language plpgsql as $$
    begin
      delete from run_commits c using deleted_runs d where c.run_id = d.run_id;
      return null;
    end $$`.execute(db);
  await sql`create trigger runs_delete_commits after delete on runs
    referencing old table as deleted_runs
    for each statement execute function run_commits_of_deleted_runs()`.execute(db);
  await sql`drop view run_events`.execute(db);
  await sql`drop table run_event_batches`.execute(db);
  await sql`drop table run_messages`.execute(db);
  await createViews(db);
}

/** `run_messages` and `run_events` as views of `run_commits`, with the bounds of the row each comes from. */
async function createViews(db: Kysely<unknown>): Promise<void> {
  await sql`create view run_messages as
    select c.run_id, c.first_idx + e.ord::integer - 1 as idx, e.message, c.created_at,
           c.first_idx as commit_first_idx, c.end_idx as commit_end_idx
      from run_commits c
     cross join lateral json_array_elements(c.messages) with ordinality as e(message, ord)`.execute(
    db,
  );
  await sql`create view run_events as
    select b.run_id,
           b.first_seq + e.ord::integer - 1 as seq,
           case when json_typeof(e.event) <> 'string' then e.event ->> 'type'
                when left(e.event #>> '{}', 1) = 'S' then 'ToolCallStarted'
                when left(e.event #>> '{}', 1) = 'C' then 'ToolCallCompleted'
                when left(e.event #>> '{}', 1) = 'K' then 'CheckpointCommitted' end as type,
           case when json_typeof(e.event) = 'string' then e.event else e.event -> 'data' end as data,
           b.created_at,
           b.last_seq as batch_last_seq,
           case when json_typeof(e.event) = 'string' then b.events -> 0 -> 'data' -> 'epoch' end as batch_epoch,
           case when json_typeof(e.event) = 'string' then b.events -> 0 -> 'data' ->> 'at' end as batch_at
      from run_commits b
     cross join lateral json_array_elements(b.events) with ordinality as e(event, ord)`.execute(db);
}

/** Restores a row per message and a row per event batch, and migration 0018's view of them. */
export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop view run_events`.execute(db);
  await sql`drop view run_messages`.execute(db);
  await sql`create table run_messages (
    run_id text not null references runs (run_id) on delete cascade,
    idx integer not null,
    message jsonb not null,
    created_at timestamptz not null default now(),
    constraint run_messages_pkey primary key (run_id, idx)
  )`.execute(db);
  await sql`insert into run_messages (run_id, idx, message, created_at)
    select c.run_id, c.first_idx + e.ord::integer - 1, e.message::jsonb, c.created_at
      from run_commits c
     cross join lateral json_array_elements(c.messages) with ordinality as e(message, ord)`.execute(
    db,
  );
  await sql`create table run_event_batches (
    run_id text not null references runs (run_id) on delete cascade,
    last_seq integer not null,
    first_seq integer not null,
    events jsonb not null,
    created_at timestamptz not null default now(),
    constraint run_event_batches_pkey primary key (run_id, last_seq),
    constraint run_event_batches_seq_check check (first_seq >= 1 and first_seq <= last_seq)
  )`.execute(db);
  await sql`insert into run_event_batches (run_id, last_seq, first_seq, events, created_at)
    select run_id, last_seq, first_seq, events::jsonb, created_at from run_commits where events is not null`.execute(
    db,
  );
  await sql`drop trigger runs_delete_commits on runs`.execute(db);
  await sql`drop function run_commits_of_deleted_runs()`.execute(db);
  await sql`drop table run_commits`.execute(db);
  await derivedEventsView(db);
}
