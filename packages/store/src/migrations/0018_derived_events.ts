import { sql } from 'kysely';
import type { Kysely } from 'kysely';

/**
 * Derived events are stored compact (issue #29): a checkpoint's or finish's batch keeps
 * `ToolCallStarted`, `ToolCallCompleted` and `CheckpointCommitted` as one short string each,
 * `<code><ms>:<fields>` (`stored-delta-events.ts`, which also reads them back):
 * - `S<ms>:<batch>:<name>:<toolCallId>` and `C<ms>:<batch>:<name>:<toolCallId>`:
 *   `{ toolCallId, name, batch, epoch, at }`;
 * - `K<ms>:<lastCheckpointAtMessageIndex>:<messages>`: `{ lastCheckpointAtMessageIndex, messages, epoch, at }`;
 * - `epoch` is the batch's first event's (a batch is one execution's, and its first event is
 *   always whole), `at` that event's `at` plus `ms` milliseconds, in `Date#toISOString` form.
 * `run_events` names a compact event's type, gives its stored string as `data`, and the batch's
 * first epoch and time (`batch_epoch`, `batch_at`) to read it with; the store's readers make it
 * whole (in Node: doing it in SQL made a run's whole stream 1.4-1.7x slower to read). An event
 * stored whole (every batch written before this, `appendEvents`) reads as it did.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create or replace view run_events as
    select b.run_id,
           b.first_seq + e.ord::integer - 1 as seq,
           case when jsonb_typeof(e.event) <> 'string' then e.event ->> 'type'
                when left(e.event #>> '{}', 1) = 'S' then 'ToolCallStarted'
                when left(e.event #>> '{}', 1) = 'C' then 'ToolCallCompleted'
                when left(e.event #>> '{}', 1) = 'K' then 'CheckpointCommitted' end as type,
           case when jsonb_typeof(e.event) = 'string' then e.event else e.event -> 'data' end as data,
           b.created_at,
           b.last_seq as batch_last_seq,
           case when jsonb_typeof(e.event) = 'string' then b.events -> 0 -> 'data' -> 'epoch' end as batch_epoch,
           case when jsonb_typeof(e.event) = 'string' then b.events -> 0 -> 'data' ->> 'at' end as batch_at
      from run_event_batches b
     cross join lateral jsonb_array_elements(b.events) with ordinality as e(event, ord)`.execute(
    db,
  );
}

/** Stores every compact event whole again, then restores the view that reads only whole events. */
export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`update run_event_batches b
       set events = (
         select jsonb_agg(case when d.text is null then e.event else jsonb_build_object(
                  'type', case left(d.text, 1) when 'S' then 'ToolCallStarted'
                                               when 'C' then 'ToolCallCompleted'
                                               else 'CheckpointCommitted' end,
                  'data', jsonb_build_object(
                    'epoch', b.events -> 0 -> 'data' -> 'epoch',
                    'at', to_char(((b.events -> 0 -> 'data' ->> 'at')::timestamptz
                                    + d.ms::bigint * interval '1 millisecond') at time zone 'UTC',
                                  'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))
                  || case when left(d.text, 1) = 'K' then jsonb_build_object(
                            'lastCheckpointAtMessageIndex', split_part(d.fields, ':', 1)::integer,
                            'messages', split_part(d.fields, ':', 2)::integer)
                          else jsonb_build_object(
                            'toolCallId', substr(d.fields, length(split_part(d.fields, ':', 1))
                                                         + length(split_part(d.fields, ':', 2)) + 3),
                            'name', split_part(d.fields, ':', 2),
                            'batch', split_part(d.fields, ':', 1)::integer) end) end
                order by e.ord)
           from jsonb_array_elements(b.events) with ordinality as e(event, ord)
          cross join lateral (
            select x.text, split_part(substr(x.text, 2), ':', 1) as ms,
                   substr(x.text, strpos(x.text, ':') + 1) as fields
              from (select case when jsonb_typeof(e.event) = 'string' then e.event #>> '{}' end as text) x) d)
     where exists (select 1 from jsonb_array_elements(b.events) x where jsonb_typeof(x.value) = 'string')`.execute(
    db,
  );
  // A view cannot drop columns: it is made anew as migration 0012 left it.
  await sql`drop view run_events`.execute(db);
  await sql`create view run_events as
    select b.run_id, b.first_seq + e.ord::integer - 1 as seq, e.event ->> 'type' as type,
           e.event -> 'data' as data, b.created_at, b.last_seq as batch_last_seq
      from run_event_batches b,
           jsonb_array_elements(b.events) with ordinality as e(event, ord)`.execute(db);
}
