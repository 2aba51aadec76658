import { sql } from 'kysely';
import type { Kysely } from 'kysely';

/**
 * A tool call committed in its final state goes in its write's `run_commits` row (issue #29):
 * - `run_commits.calls`: the write's calls stored final, one `json` array of
 *   `{ id, name, args, result, status, batch, key, child, epoch, started, ended, ro }` (`result`
 *   null and `ro` its 1-based place among the write's messages when its tool message holds it),
 *   in the write's first row; compressed with the messages when the row passes ~2 KB;
 * - `tool_call_rows` (the table `tool_calls` was): the calls committed while still `running`
 *   (tool-call mode, member runs, human in the loop), a row each, updated in place when they end;
 * - `tool_calls`: a view of both, with the table's columns, so its readers read as before.
 * Existing rows stay in `tool_call_rows`: they read through the view as they did.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table tool_calls rename to tool_call_rows`.execute(db);
  await sql`alter table tool_call_rows rename constraint tool_calls_pkey to tool_call_rows_pkey`.execute(
    db,
  );
  await sql`alter table run_commits add column calls json`.execute(db);
  await sql`create view tool_calls as
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

/** Moves the calls held in `run_commits` back to a row each in `tool_calls`. */
export async function down(db: Kysely<unknown>): Promise<void> {
  const columns = sql.raw(
    'run_id, tool_call_id, name, args, result, status, batch, idempotency_key, child_run_id, epoch, started_at, ended_at, result_message_idx',
  );
  // A call recorded twice keeps one row (the old table's key), its latest.
  await sql`insert into tool_call_rows (${columns})
    select distinct on (c.run_id, x.id) c.run_id, x.id, x.name, x.args::jsonb, x.result, x.status, x.batch,
           x.key, x.child, x.epoch, x.started, x.ended, c.first_idx + x.ro - 1
      from run_commits c
     cross join lateral json_to_recordset(c.calls) as x(
       id text, name text, args json, result text, status text, batch integer, key text,
       child text, epoch integer, started timestamptz, ended timestamptz, ro integer)
     where not exists (select 1 from tool_call_rows r where r.run_id = c.run_id and r.tool_call_id = x.id)
     order by c.run_id, x.id, c.last_seq desc, c.end_idx desc`.execute(db);
  await sql`drop view tool_calls`.execute(db);
  await sql`alter table run_commits drop column calls`.execute(db);
  await sql`alter table tool_call_rows rename constraint tool_call_rows_pkey to tool_calls_pkey`.execute(
    db,
  );
  await sql`alter table tool_call_rows rename to tool_calls`.execute(db);
}
