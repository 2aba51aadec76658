import { sql } from 'kysely';
import type { Kysely } from 'kysely';

/**
 * A run's stored events, one row per write (issue #22, the hot path):
 * - `run_event_batches`: the events one statement stores (a checkpoint's model turn, tool
 *   starts and completions and the commit; a finish; an action's decision), as one jsonb array
 *   `[{ type, data }]` numbered `first_seq..last_seq`. One heap tuple and one primary-key entry
 *   instead of one of each per event; a batch over ~2 KB is compressed by TOAST.
 * - `run_events`: a view of the same events one row each (`run_id, seq, type, data,
 *   created_at`, and `batch_last_seq`: its batch's `last_seq`), the one place that unpacks a
 *   batch; a read after a cursor bounds `batch_last_seq` too, so it reads the batches after the
 *   cursor by the table's primary key, not every batch of the run.
 * Existing events become one-event batches (same sequence numbers, data and times); the old
 * table is dropped in the same transaction.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
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
    select run_id, seq, seq, jsonb_build_array(jsonb_build_object('type', type, 'data', data)), created_at
      from run_events`.execute(db);
  await sql`drop table run_events`.execute(db);
  await sql`create view run_events as
    select b.run_id, b.first_seq + e.ord::integer - 1 as seq, e.event ->> 'type' as type,
           e.event -> 'data' as data, b.created_at, b.last_seq as batch_last_seq
      from run_event_batches b,
           jsonb_array_elements(b.events) with ordinality as e(event, ord)`.execute(db);
}

/** Restores one row per event. */
export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`create table run_events_rows as select run_id, seq, type, data, created_at from run_events`.execute(
    db,
  );
  await sql`drop view run_events`.execute(db);
  await sql`drop table run_event_batches`.execute(db);
  await sql`alter table run_events_rows rename to run_events`.execute(db);
  await sql`alter table run_events
    alter column run_id set not null, alter column seq set not null,
    alter column type set not null, alter column data set not null,
    alter column created_at set not null, alter column created_at set default now(),
    add constraint run_events_pkey primary key (run_id, seq),
    add constraint run_events_run_id_fkey foreign key (run_id) references runs (run_id) on delete cascade`.execute(
    db,
  );
}
