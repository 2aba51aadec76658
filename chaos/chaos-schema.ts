import type pg from 'pg';

/**
 * The harness's own tables, next to the store's: the tool ledger and an
 * audit of every committed write, filled by triggers inside the writing
 * transaction. `run_epoch` is the run's epoch as that transaction sees it,
 * `row_epoch` the epoch the writer claims (a tool call's epoch, the
 * `[chaos-epoch N]` tag of a chaos tool's result, a finished attempt's epoch):
 * a fenced store never commits a row where the two differ. A member run's
 * claim records which worker held its team run then (`parent_holder`).
 */
const DDL = `
create table if not exists chaos_tool_ledger (
  id bigserial primary key,
  tool text not null,
  idempotency_key text not null,
  run_id text not null,
  epoch integer not null,
  worker_id text not null,
  worker_pid integer not null,
  at timestamptz not null default clock_timestamp()
);
create index if not exists chaos_tool_ledger_key_idx on chaos_tool_ledger (idempotency_key);

create table if not exists chaos_write_audit (
  id bigserial primary key,
  tbl text not null,
  run_id text not null,
  item text not null,
  row_epoch integer,
  run_epoch integer,
  old_index integer,
  new_index integer,
  old_status text,
  new_status text,
  parent_holder text,
  at timestamptz not null default clock_timestamp()
);
create index if not exists chaos_write_audit_run_idx on chaos_write_audit (run_id);

create or replace function chaos_audit_tool_call() returns trigger language plpgsql as $$
begin
  insert into chaos_write_audit (tbl, run_id, item, row_epoch, run_epoch, new_status)
  values ('tool_calls', new.run_id, new.tool_call_id, new.epoch,
          (select epoch from runs where run_id = new.run_id), new.status);
  return null;
end $$;

-- A write's row: one audit row per message it holds (tbl 'run_messages', item its index) and per
-- call it holds stored final (tbl 'tool_calls', as a call's own row is audited).
create or replace function chaos_audit_commit() returns trigger language plpgsql as $$
declare held integer := (select epoch from runs where run_id = new.run_id);
begin
  insert into chaos_write_audit (tbl, run_id, item, row_epoch, run_epoch)
  select 'run_messages', new.run_id, (new.first_idx + m.ord - 1)::text,
         case when m.message->>'role' = 'tool' and m.message->>'name' in ('chaos_search', 'chaos_fetch_detail')
              then substring(m.message->>'content' from '\\[chaos-epoch (\\d+)\\]')::integer end,
         held
    from json_array_elements(new.messages) with ordinality as m(message, ord);
  insert into chaos_write_audit (tbl, run_id, item, row_epoch, run_epoch, new_status)
  select 'tool_calls', new.run_id, c.id, c.epoch, held, c.status
    from json_to_recordset(new.calls) as c(id text, epoch integer, status text);
  return null;
end $$;

create or replace function chaos_audit_attempt() returns trigger language plpgsql as $$
begin
  insert into chaos_write_audit (tbl, run_id, item, row_epoch, run_epoch)
  values ('run_attempts', new.run_id, new.outcome, new.epoch,
          (select epoch from runs where run_id = new.run_id));
  return null;
end $$;

create or replace function chaos_audit_run() returns trigger language plpgsql as $$
begin
  insert into chaos_write_audit (tbl, run_id, item, run_epoch, old_index, new_index, old_status, new_status)
  values ('runs', new.run_id, 'update', new.epoch, old.last_checkpoint_at_message_index,
          new.last_checkpoint_at_message_index, old.status, new.status);
  return null;
end $$;

create or replace function chaos_audit_member_claim() returns trigger language plpgsql as $$
declare parent text := (select parent_run_id from runs where run_id = new.run_id);
begin
  if parent is not null then
    insert into chaos_write_audit (tbl, run_id, item, row_epoch, parent_holder)
    values ('member_claims', new.run_id, new.worker_id, new.epoch,
            (select a.worker_id from run_attempts a where a.run_id = parent order by a.epoch desc limit 1));
  end if;
  return null;
end $$;

drop trigger if exists chaos_audit_claim on run_attempts;
create trigger chaos_audit_claim after insert on run_attempts
  for each row execute function chaos_audit_member_claim();
drop trigger if exists chaos_audit on tool_call_rows;
create trigger chaos_audit after insert or update on tool_call_rows
  for each row execute function chaos_audit_tool_call();
drop trigger if exists chaos_audit on run_commits;
create trigger chaos_audit after insert on run_commits
  for each row when (new.messages is not null or new.calls is not null) execute function chaos_audit_commit();
drop trigger if exists chaos_audit on run_attempts;
create trigger chaos_audit after update on run_attempts
  for each row when (new.outcome is distinct from old.outcome and new.outcome in ('completed', 'error', 'paused'))
  execute function chaos_audit_attempt();
drop trigger if exists chaos_audit on runs;
create trigger chaos_audit after update on runs
  for each row when (new.last_checkpoint_at_message_index < old.last_checkpoint_at_message_index
                     or old.status in ('COMPLETED', 'CANCELLED'))
  execute function chaos_audit_run();
`;

/** Creates the ledger and audit tables and the audit triggers (after the store's migrations). */
export async function installChaosSchema(db: pg.Pool): Promise<void> {
  await db.query(DDL);
}
