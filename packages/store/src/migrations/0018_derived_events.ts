import { sql } from 'kysely';
import type { Kysely } from 'kysely';

/**
 * Derived events are stored compact (issue #29): a checkpoint's or finish's batch keeps
 * `ToolCallStarted`, `ToolCallCompleted` and `CheckpointCommitted` as one short string each,
 * `<code><ms>:<fields>` (`stored-delta-events.ts`), and `run_events` gives them back whole, with
 * the same sequence number, type and data as when they were stored whole:
 * - `S<ms>:<toolCallId>` and `C<ms>:<toolCallId>`: `{ toolCallId, name, batch, epoch, at }`,
 *   `name` and `batch` from the call's `tool_calls` row;
 * - `K<ms>:<lastCheckpointAtMessageIndex>:<messages>`: `{ lastCheckpointAtMessageIndex, messages, epoch, at }`;
 * - `epoch` is the batch's first event's (a batch is one execution's, and its first event is
 *   always whole), `at` that event's `at` plus `ms` milliseconds, in `Date#toISOString` form.
 * An event stored whole (an object: every batch written before this, `appendEvents`) reads as
 * it did. The view keeps its columns, so its readers (events API and SSE, run-tree events, the
 * waterfall) are unchanged.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create or replace view run_events as
    select b.run_id,
           b.first_seq + e.ord::integer - 1 as seq,
           case when d.code is null then e.event ->> 'type'
                when d.code = 'S' then 'ToolCallStarted'
                when d.code = 'C' then 'ToolCallCompleted'
                when d.code = 'K' then 'CheckpointCommitted' end as type,
           case when d.code is null then e.event -> 'data'
                else jsonb_build_object(
                       'epoch', b.events -> 0 -> 'data' -> 'epoch',
                       'at', to_char(
                         ((b.events -> 0 -> 'data' ->> 'at')::timestamptz
                           + d.ms::bigint * interval '1 millisecond') at time zone 'UTC',
                         'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))
                  || case when d.code = 'K' then jsonb_build_object(
                            'lastCheckpointAtMessageIndex', split_part(d.fields, ':', 1)::integer,
                            'messages', split_part(d.fields, ':', 2)::integer)
                          -- a key lookup per compact call event, never a read of the run's calls
                          else (select jsonb_build_object('toolCallId', d.fields, 'name', t.name, 'batch', t.batch)
                                  from (values (1)) as one (x)
                                  left join tool_calls t on t.run_id = b.run_id and t.tool_call_id = d.fields) end
           end as data,
           b.created_at,
           b.last_seq as batch_last_seq
      from run_event_batches b
     cross join lateral jsonb_array_elements(b.events) with ordinality as e(event, ord)
     cross join lateral (
       select left(x.text, 1) as code, split_part(substr(x.text, 2), ':', 1) as ms,
              substr(x.text, strpos(x.text, ':') + 1) as fields
         from (select case when jsonb_typeof(e.event) = 'string' then e.event #>> '{}' end as text) x) d`.execute(
    db,
  );
}

/** Stores every compact event whole again, then restores the view that reads only whole events. */
export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`update run_event_batches b
       set events = (select jsonb_agg(jsonb_build_object('type', e.type, 'data', e.data) order by e.seq)
                       from run_events e
                      where e.run_id = b.run_id and e.batch_last_seq = b.last_seq)
     where exists (select 1 from jsonb_array_elements(b.events) x where jsonb_typeof(x.value) = 'string')`.execute(
    db,
  );
  await sql`create or replace view run_events as
    select b.run_id, b.first_seq + e.ord::integer - 1 as seq, e.event ->> 'type' as type,
           e.event -> 'data' as data, b.created_at, b.last_seq as batch_last_seq
      from run_event_batches b,
           jsonb_array_elements(b.events) with ordinality as e(event, ord)`.execute(db);
}
