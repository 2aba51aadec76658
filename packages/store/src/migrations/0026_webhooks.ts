import { sql } from 'kysely';
import type { Kysely } from 'kysely';

/**
 * Signed webhooks (issue #32). `webhook_endpoints`: a tenant's endpoints (`tenant_key` '' for an
 * admin key's runs), each with its secret, the event types it takes (none listed: all) and an
 * optional entity. `webhook_events`: the outbox, one row per event that some enabled endpoint
 * takes, written in the transaction of the change that causes it; a dispatcher turns each row into
 * delivery jobs and stamps `dispatched_at`. A row with `endpoint_id` is a redelivery of
 * `message_id` to that endpoint alone. `webhook_attempts`: one row per delivery attempt.
 *
 * `cairn_webhook_record` is the one rule of what is recorded: nothing unless an enabled endpoint of
 * the tenant (and of the run's entity, when it names one) takes the type. A deferred constraint
 * trigger on `runs` calls it when a root run's status changes into PAUSED, COMPLETED, ERROR or
 * CANCELLED: at commit, so a pause's pending actions, written by the same transaction, are listed.
 * A checkpoint (no status change) queues nothing; a change with no endpoint costs one index probe.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create table webhook_endpoints (
    endpoint_id text primary key,
    tenant_id text,
    tenant_key text generated always as (coalesce(tenant_id, '')) stored,
    url text not null,
    events text[] not null default '{}',
    entity_name text,
    description text not null default '',
    secret text not null,
    disabled boolean not null default false,
    created_at timestamptz not null default now(),
    updated_at timestamptz not null default now())`.execute(db);
  await sql`create index webhook_endpoints_enabled on webhook_endpoints (tenant_key) where not disabled`.execute(
    db,
  );
  await sql`create table webhook_events (
    event_id bigserial primary key,
    tenant_key text not null,
    type text not null,
    run_id text,
    entity_name text,
    payload jsonb not null,
    endpoint_id text references webhook_endpoints (endpoint_id) on delete cascade,
    message_id text,
    created_at timestamptz not null default now(),
    dispatched_at timestamptz)`.execute(db);
  await sql`create index webhook_events_undispatched on webhook_events (event_id) where dispatched_at is null`.execute(
    db,
  );
  await sql`create table webhook_attempts (
    attempt_id bigserial primary key,
    endpoint_id text not null references webhook_endpoints (endpoint_id) on delete cascade,
    message_id text not null,
    event_type text not null,
    attempt integer not null,
    status_code integer,
    latency_ms integer not null,
    error text,
    created_at timestamptz not null default now())`.execute(db);
  await sql`create index webhook_attempts_by_endpoint on webhook_attempts (endpoint_id, attempt_id desc)`.execute(
    db,
  );
  await sql`create or replace function cairn_webhook_record(
      p_tenant_key text, p_type text, p_run_id text, p_entity_name text, p_payload jsonb)
    returns bigint language plpgsql as $$
    declare
      v_id bigint;
    begin
      if not exists (
        select 1 from webhook_endpoints e
         where e.tenant_key = p_tenant_key and not e.disabled
           and (cardinality(e.events) = 0 or p_type = any (e.events))
           and (e.entity_name is null or e.entity_name = p_entity_name)) then
        return null;
      end if;
      insert into webhook_events (tenant_key, type, run_id, entity_name, payload)
      values (p_tenant_key, p_type, p_run_id, p_entity_name, p_payload)
      returning event_id into v_id;
      return v_id;
    end $$`.execute(db);
  await sql`create or replace function cairn_webhook_run_event() returns trigger
    language plpgsql as $$
    declare
      v_actions jsonb;
      v_type text;
    begin
      if not exists (select 1 from webhook_endpoints e where e.tenant_key = new.tenant_key and not e.disabled) then
        return null;
      end if;
      if new.status = 'PAUSED' then
        select coalesce(jsonb_agg(jsonb_build_object(
                 'action_id', a.action_id, 'kind', a.kind, 'run_id', a.run_id,
                 'member_path', a.member_path, 'tool', a.tool, 'args', a.args,
                 'expires_at', a.expires_at) order by a.created_at, a.action_id), '[]'::jsonb)
          into v_actions
          from pending_actions a where a.root_run_id = new.run_id and a.status = 'pending';
        v_type := case when exists (select 1 from jsonb_array_elements(v_actions) x where x->>'kind' = 'budget')
                       then 'run.budget_paused' else 'run.paused' end;
      else
        v_type := case new.status when 'COMPLETED' then 'run.completed'
                                  when 'ERROR' then 'run.errored' else 'run.cancelled' end;
      end if;
      perform cairn_webhook_record(new.tenant_key, v_type, new.run_id, new.entity_name,
        jsonb_strip_nulls(jsonb_build_object(
          'run_id', new.run_id, 'session_id', new.session_id, 'tenant', new.tenant_id,
          'entity', jsonb_build_object('kind', new.entity_kind, 'name', new.entity_name),
          'status', new.status, 'error', new.error, 'pending_actions', v_actions)));
      return null;
    end $$`.execute(db);
  await sql`create constraint trigger runs_webhook_event after update of status on runs
    deferrable initially deferred for each row
    when (old.status is distinct from new.status and new.parent_run_id is null
          and new.status in ('PAUSED', 'COMPLETED', 'ERROR', 'CANCELLED'))
    execute function cairn_webhook_run_event()`.execute(db);
}

/** Drops the trigger, the functions and the tables. */
export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop trigger if exists runs_webhook_event on runs`.execute(db);
  await sql`drop function if exists cairn_webhook_run_event()`.execute(db);
  await sql`drop function if exists cairn_webhook_record(text, text, text, text, jsonb)`.execute(
    db,
  );
  await sql`drop table if exists webhook_attempts, webhook_events, webhook_endpoints`.execute(db);
}
