import { sql } from 'kysely';
import type { Kysely } from 'kysely';

/**
 * Each call of each row with every field, the left-out ones taken from the row (`ord`: its place
 * in the row's array). The default key restates `idempotencyKeyFor` (`@cairn/engine`).
 */
const EXPANDED_CALLS = sql`
  select c.run_id, c.first_idx, c.last_seq, c.end_idx, x.ord, x.id,
         coalesce(x.name, q.name) as name,
         case when x.name is null then q.arguments::json else x.args end as args,
         x.result, x.status, x.batch, coalesce(x.key, c.run_id || ':' || x.id) as key, x.child,
         x.epoch, x.started, x.ended, x.ro
    from run_commits c
   cross join lateral rows from (json_to_recordset(c.calls) as (
     id text, name text, args json, result text, status text, batch integer, key text,
     child text, epoch integer, started text, ended text, ro integer)) with ordinality as x(
     id, name, args, result, status, batch, key, child, epoch, started, ended, ro, ord)
    left join lateral (
      select t->>'name' as name, t->>'arguments' as arguments
        from json_array_elements(c.messages) m
       cross join json_array_elements(m->'toolCalls') t
       where x.name is null and t->>'id' = x.id
       limit 1) q on true`;

/**
 * A call stored final in its write's `run_commits.calls` leaves out what the row says elsewhere
 * (issue #29; `committed-calls.ts` writes and reads it): `name` and `args` when an assistant
 * message of the same row asked for the call with them, `key` when it is the default
 * `<run id>:<call id>`, and `result`, `child`, `ro` when null. The `tool_calls` view takes them from
 * the row's messages and the default. Rows stored before hold every field and read as before.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create or replace view tool_calls as
    select run_id, tool_call_id, name, args, result, status, batch, idempotency_key, child_run_id,
           epoch, started_at, ended_at, result_message_idx
      from tool_call_rows
    union all
    select e.run_id, e.id, e.name, e.args::jsonb, e.result, e.status, e.batch, e.key, e.child,
           e.epoch, e.started::timestamptz, e.ended::timestamptz, e.first_idx + e.ro - 1
      from (${EXPANDED_CALLS}) e`.execute(db);
}

/** Writes every field of every stored call back, and the view as `0020_commit_tool_calls` made it. */
export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`update run_commits r set calls = full_calls.calls
      from (select e.run_id, e.last_seq, e.end_idx,
                   json_agg(json_build_object('id', e.id, 'name', e.name, 'args', e.args,
                     'result', e.result, 'status', e.status, 'batch', e.batch, 'key', e.key,
                     'child', e.child, 'epoch', e.epoch, 'started', e.started, 'ended', e.ended,
                     'ro', e.ro) order by e.ord) as calls
              from (${EXPANDED_CALLS}) e
             group by e.run_id, e.last_seq, e.end_idx) full_calls
     where r.run_id = full_calls.run_id and r.last_seq = full_calls.last_seq
       and r.end_idx = full_calls.end_idx`.execute(db);
  await sql`create or replace view tool_calls as
    select run_id, tool_call_id, name, args, result, status, batch, idempotency_key, child_run_id,
           epoch, started_at, ended_at, result_message_idx
      from tool_call_rows
    union all
    select c.run_id, x.id, x.name, x.args::jsonb, x.result, x.status, x.batch, x.key, x.child,
           x.epoch, x.started, x.ended, c.first_idx + x.ro - 1
      from run_commits c
     cross join lateral json_to_recordset(c.calls) as x(
       id text, name text, args json, result text, status text, batch integer, key text,
       child text, epoch integer, started timestamptz, ended timestamptz, ro integer)`.execute(db);
}
