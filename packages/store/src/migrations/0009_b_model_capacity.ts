import { sql } from 'kysely';
import type { Kysely, RawBuilder } from 'kysely';

/**
 * The fleet-wide model capacity limiter on Postgres (`PostgresModelCapacity`,
 * docs/capacity.md and docs/operations.md, "Model capacity"): its state tables and one PL/pgSQL function per
 * operation, each called in one statement that locks the model's row and
 * reads the time from `clock_timestamp()` only, so workers' clocks never
 * need to agree.
 *
 * The tables are UNLOGGED: every row is ephemeral (slot leases of seconds, a
 * one-minute window, waiters that vanish 2 s after their last ask, a pause
 * until a provider's reset), rewritten on almost every model request, and
 * worth no WAL. A crash empties them, which costs at most one window of
 * over-admission and forgets an adaptive cap (the next 429 brings it back);
 * a standby has none of them, so a failover starts from the same empty state.
 *
 * Ids stay small: a model is an integer in every state row, a permit a
 * bigint from one sequence (taken without any lock, so an unlimited model's
 * permit never waits). State stays bounded: each call first prunes its
 * model's expired slots, grants out of the window, absent waiters and tenants
 * whose virtual time the model's has passed.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of UP) await statement.execute(db);
}

/** Drops the limiter's functions, tables and sequence. */
export async function down(db: Kysely<unknown>): Promise<void> {
  for (const name of FUNCTIONS.toReversed()) {
    await sql`drop function ${sql.raw(name)}`.execute(db);
  }
  for (const table of [
    'cairn_capacity_tenants',
    'cairn_capacity_waiters',
    'cairn_capacity_grants',
    'cairn_capacity_slots',
    'cairn_capacity_models',
  ]) {
    await sql`drop table ${sql.table(table)}`.execute(db);
  }
  await sql`drop sequence cairn_capacity_permit_ids`.execute(db);
}

const FUNCTIONS = [
  'cairn_capacity_ms(interval)',
  'cairn_capacity_refusal(text, double precision)',
  'cairn_capacity_lock(text, boolean)',
  'cairn_capacity_prune(cairn_capacity_models, timestamptz, jsonb)',
  'cairn_capacity_position(integer, text, double precision)',
  'cairn_capacity_try_acquire(jsonb)',
  'cairn_capacity_renew(jsonb)',
  'cairn_capacity_release(jsonb)',
  'cairn_capacity_rate_limited(jsonb)',
  'cairn_capacity_leave(jsonb)',
  'cairn_capacity_snapshot(jsonb)',
] as const;

const UP: readonly RawBuilder<unknown>[] = [
  // One row per model seen: the row every call locks, and the model's scalar state.
  sql`
    create unlogged table cairn_capacity_models (
      model_id integer generated always as identity primary key,
      model text not null unique,
      -- The configured concurrency last asked with: release grows an adaptive cap back up to it.
      configured_concurrency double precision,
      adaptive_cap double precision,
      paused_until timestamptz,
      -- EWMA of a slot's hold time (grant to release), for concurrency waits.
      avg_hold_ms double precision,
      -- Start-time fair queuing: the start tag of the last grant.
      global_vt double precision not null default 0,
      -- Running count and token sum of cairn_capacity_grants' rows of this model.
      window_requests integer not null default 0,
      window_tokens bigint not null default 0
    )`,
  // Permits holding a concurrency slot (only while a cap is in force), live until lease_until.
  sql`
    create unlogged table cairn_capacity_slots (
      model_id integer not null,
      permit_id bigint not null,
      granted_at timestamptz not null,
      lease_until timestamptz not null,
      primary key (model_id, permit_id)
    )`,
  // The sliding window of grants (only while requests or tokens per minute are configured).
  sql`
    create unlogged table cairn_capacity_grants (
      model_id integer not null,
      permit_id bigint not null,
      granted_at timestamptz not null,
      tokens bigint not null,
      primary key (model_id, permit_id)
    )`,
  // Pruning and the refusals' estimates read a model's grants oldest first.
  sql`create index cairn_capacity_grants_window_idx on cairn_capacity_grants (model_id, granted_at)`,
  // Waiters in line. No index on last_seen: every ask rewrites it (an index would make each of those a
  // non-HOT update), and a model's waiters are read whole by the fair order anyway.
  sql`
    create unlogged table cairn_capacity_waiters (
      model_id integer not null,
      waiter_id text not null,
      tenant text not null,
      weight double precision not null,
      priority smallint not null,
      since timestamptz not null,
      last_seen timestamptz not null,
      primary key (model_id, waiter_id)
    )`,
  // Per-tenant virtual time; a tenant at or below the model's global_vt is pruned (it counts as global_vt).
  sql`
    create unlogged table cairn_capacity_tenants (
      model_id integer not null,
      tenant text not null,
      vt double precision not null,
      primary key (model_id, tenant)
    )`,
  sql`create sequence cairn_capacity_permit_ids as bigint`,

  // Ms in an interval.
  sql`
    create function cairn_capacity_ms(i interval) returns double precision
    language sql immutable as $$ select extract(epoch from i)::double precision * 1000 $$`,

  // A refusal: retryAfterMs in whole ms, never less than 1.
  sql`
    create function cairn_capacity_refusal(p_reason text, p_retry_ms double precision) returns jsonb
    language sql immutable as $$
      select jsonb_build_object(
        'granted', false, 'reason', p_reason, 'retryAfterMs', greatest(1, ceil(p_retry_ms))::bigint)
    $$`,

  // The model's row, locked (for update); created first when missing and p_create. A missing row
  // without p_create comes back as all nulls.
  sql`
    create function cairn_capacity_lock(p_model text, p_create boolean) returns cairn_capacity_models
    language plpgsql as $$
    declare
      r cairn_capacity_models;
    begin
      select * into r from cairn_capacity_models where model = p_model for update;
      if not found and p_create then
        -- Only when missing: an insert draws an identity value even when it conflicts.
        insert into cairn_capacity_models (model) values (p_model) on conflict (model) do nothing;
        select * into r from cairn_capacity_models where model = p_model for update;
      end if;
      return r;
    end $$`,

  // Deletes the locked model's expired state (slots past their lease, grants out of the window,
  // waiters absent longer than the TTL, tenants the global virtual time has passed); returns the row.
  sql`
    create function cairn_capacity_prune(p_model cairn_capacity_models, p_now timestamptz, a jsonb)
    returns cairn_capacity_models
    language plpgsql as $$
    declare
      v_window interval := ((a->>'windowMs')::double precision + 250) * interval '1 millisecond';
      v_ttl interval := (a->>'waiterTtlMs')::double precision * interval '1 millisecond';
      v_requests integer;
      v_tokens bigint;
      r cairn_capacity_models;
    begin
      delete from cairn_capacity_slots where model_id = p_model.model_id and lease_until <= p_now;
      delete from cairn_capacity_waiters where model_id = p_model.model_id and last_seen < p_now - v_ttl;
      delete from cairn_capacity_tenants where model_id = p_model.model_id and vt <= p_model.global_vt;
      with gone as (
        delete from cairn_capacity_grants
        where model_id = p_model.model_id and granted_at <= p_now - v_window
        returning tokens
      )
      select count(*), coalesce(sum(tokens), 0) into v_requests, v_tokens from gone;
      if v_requests = 0 then
        return p_model;
      end if;
      update cairn_capacity_models
      set window_requests = window_requests - v_requests, window_tokens = window_tokens - v_tokens
      where model_id = p_model.model_id
      returning * into r;
      return r;
    end $$`,

  // The waiter's place (0 first) in the fair order of the model's present waiters: repeatedly the
  // tenant with the smallest start tag S(t) = max(vt[t], global_vt) (ties by tenant name, bytewise),
  // its best waiter (priority, then since, then waiterId), S(t) += 1 / that waiter's weight.
  sql`
    create function cairn_capacity_position(p_model_id integer, p_waiter text, p_global_vt double precision)
    returns integer
    language plpgsql as $$
    declare
      w_ids text[];
      w_weights double precision[];
      t_next integer[];
      t_last integer[];
      t_start double precision[];
      v_best integer;
      v_pick integer := 0;
    begin
      with ordered as (
        select waiter_id, tenant, weight,
          row_number() over (
            order by tenant collate "C", priority, since, waiter_id collate "C") as n
        from cairn_capacity_waiters
        where model_id = p_model_id
      ),
      waiting_tenants as (
        select o.tenant, min(o.n)::integer as first, max(o.n)::integer as last,
          greatest(coalesce(max(t.vt), p_global_vt), p_global_vt) as start_tag
        from ordered o
        left join cairn_capacity_tenants t on t.model_id = p_model_id and t.tenant = o.tenant
        group by o.tenant
      )
      select
        (select array_agg(waiter_id order by n) from ordered),
        (select array_agg(weight order by n) from ordered),
        array_agg(first order by tenant collate "C"),
        array_agg(last order by tenant collate "C"),
        array_agg(start_tag order by tenant collate "C")
      into w_ids, w_weights, t_next, t_last, t_start
      from waiting_tenants;
      loop
        v_best := null;
        for i in 1 .. coalesce(array_length(t_next, 1), 0) loop
          -- Strictly smaller: on a tie the earlier tenant (by name) stays best.
          if t_next[i] <= t_last[i] and (v_best is null or t_start[i] < t_start[v_best]) then
            v_best := i;
          end if;
        end loop;
        if v_best is null or w_ids[t_next[v_best]] = p_waiter then
          return v_pick;
        end if;
        t_start[v_best] := t_start[v_best] + 1 / w_weights[t_next[v_best]];
        t_next[v_best] := t_next[v_best] + 1;
        v_pick := v_pick + 1;
      end loop;
    end $$`,

  sql`
    create function cairn_capacity_try_acquire(a jsonb) returns jsonb
    language plpgsql as $$
    declare
      v_model text := a->>'model';
      v_concurrency double precision := (a->>'concurrency')::double precision;
      v_rpm double precision := (a->>'requestsPerMinute')::double precision;
      v_tpm double precision := (a->>'tokensPerMinute')::double precision;
      v_waiter text := a->>'waiterId';
      v_tenant text := a->>'tenant';
      v_weight double precision := (a->>'weight')::double precision;
      v_tokens bigint := round((a->>'tokens')::numeric);
      v_window_ms double precision := (a->>'windowMs')::double precision + 250;
      v_window interval := v_window_ms * interval '1 millisecond';
      r cairn_capacity_models;
      v_now timestamptz;
      v_cap double precision;
      v_room double precision;
      v_kind text;
      v_in_flight integer;
      v_token_room integer;
      v_waiters integer;
      v_position integer := 0;
      v_need double precision;
      v_at timestamptz;
      v_start double precision;
      v_permit bigint;
      v_windowed boolean := v_rpm is not null or v_tpm is not null;
    begin
      if v_concurrency is null and not v_windowed then
        -- Fast path, no configured limit: grant without a lock unless a 429 left a pause or an
        -- adaptive cap (or a configured concurrency is still to be forgotten).
        select * into r from cairn_capacity_models where model = v_model;
        if r.model_id is null then
          -- Seen (for snapshot), still without a lock.
          insert into cairn_capacity_models (model) values (v_model) on conflict (model) do nothing;
        end if;
        if r.model_id is null or (r.adaptive_cap is null and r.configured_concurrency is null
            and coalesce(r.paused_until <= clock_timestamp(), true)) then
          return jsonb_build_object(
            'granted', true, 'id', nextval('cairn_capacity_permit_ids')::text, 'holdsSlot', false);
        end if;
      end if;

      r := cairn_capacity_lock(v_model, true);
      v_now := clock_timestamp();
      r := cairn_capacity_prune(r, v_now, a);
      if r.configured_concurrency is distinct from v_concurrency then
        update cairn_capacity_models set configured_concurrency = v_concurrency
        where model_id = r.model_id;
      end if;
      insert into cairn_capacity_waiters as w
        (model_id, waiter_id, tenant, weight, priority, since, last_seen)
      values (r.model_id, v_waiter, v_tenant, v_weight, (a->>'priority')::smallint,
        v_now - (a->>'waitedMs')::double precision * interval '1 millisecond', v_now)
      on conflict (model_id, waiter_id) do update
      set tenant = excluded.tenant, weight = excluded.weight, priority = excluded.priority,
        since = least(w.since, excluded.since), last_seen = excluded.last_seen;

      if r.paused_until > v_now then
        return cairn_capacity_refusal('paused', cairn_capacity_ms(r.paused_until - v_now));
      end if;

      -- Room: the least over the kinds in force; v_kind is the one that binds (the first on a tie).
      v_cap := least(v_concurrency, r.adaptive_cap);
      if v_cap is not null then
        select count(*) into v_in_flight from cairn_capacity_slots where model_id = r.model_id;
        v_room := floor(v_cap) - v_in_flight;
        v_kind := 'concurrency';
      end if;
      if v_rpm is not null and (v_room is null or floor(v_rpm) - r.window_requests < v_room) then
        v_room := floor(v_rpm) - r.window_requests;
        v_kind := 'requests';
      end if;
      if v_tpm is not null then
        v_token_room := case
          when r.window_tokens = 0 or r.window_tokens + v_tokens <= v_tpm then 1 else 0 end;
        if v_room is null or v_token_room < v_room then
          v_room := v_token_room;
          v_kind := 'tokens';
        end if;
      end if;

      if v_room is not null then
        select count(*) into v_waiters from cairn_capacity_waiters where model_id = r.model_id;
        if v_waiters > 1 then
          v_position := cairn_capacity_position(r.model_id, v_waiter, r.global_vt);
        end if;
      end if;

      if v_room <= 0 then
        if v_kind = 'concurrency' then
          return cairn_capacity_refusal('concurrency', greatest(25,
            coalesce(r.avg_hold_ms, 1000) * (v_position + 1) / greatest(1, floor(v_cap))));
        elsif v_kind = 'requests' then
          -- Until enough of the oldest grants leave the window to make room for this waiter's
          -- place; past the grants in the window, a whole window per rpm more.
          v_need := r.window_requests - floor(v_rpm) + 1 + v_position;
          select granted_at into v_at from cairn_capacity_grants
          where model_id = r.model_id
          order by granted_at, permit_id
          offset greatest(0, least(v_need, r.window_requests) - 1)::integer
          limit 1;
          return cairn_capacity_refusal('requests',
            coalesce(cairn_capacity_ms(v_at + v_window - v_now), v_window_ms)
            + v_window_ms * ceil(greatest(0, v_need - r.window_requests) / greatest(1, floor(v_rpm))));
        else
          -- Until enough tokens leave the window (all of them, for a request above the limit).
          v_need := r.window_tokens + v_tokens - v_tpm;
          select granted_at into v_at from (
            select granted_at, sum(tokens) over (order by granted_at, permit_id) as leaving
            from cairn_capacity_grants where model_id = r.model_id
          ) g
          where leaving >= v_need
          order by granted_at
          limit 1;
          if v_at is null then
            select max(granted_at) into v_at from cairn_capacity_grants where model_id = r.model_id;
          end if;
          return cairn_capacity_refusal('tokens', cairn_capacity_ms(v_at + v_window - v_now));
        end if;
      end if;
      if v_position >= v_room then
        return cairn_capacity_refusal('fairness', least(100, 25 * (v_position - v_room + 1)));
      end if;

      -- Granted.
      delete from cairn_capacity_waiters where model_id = r.model_id and waiter_id = v_waiter;
      select greatest(vt, r.global_vt) into v_start
      from cairn_capacity_tenants where model_id = r.model_id and tenant = v_tenant;
      v_start := coalesce(v_start, r.global_vt);
      insert into cairn_capacity_tenants (model_id, tenant, vt)
      values (r.model_id, v_tenant, v_start + 1 / v_weight)
      on conflict (model_id, tenant) do update set vt = excluded.vt;
      v_permit := nextval('cairn_capacity_permit_ids');
      if v_cap is not null then
        insert into cairn_capacity_slots (model_id, permit_id, granted_at, lease_until)
        values (r.model_id, v_permit, v_now,
          v_now + (a->>'leaseMs')::double precision * interval '1 millisecond');
      end if;
      if v_windowed then
        insert into cairn_capacity_grants (model_id, permit_id, granted_at, tokens)
        values (r.model_id, v_permit, v_now, v_tokens);
      end if;
      update cairn_capacity_models
      set global_vt = v_start,
        window_requests = window_requests + case when v_windowed then 1 else 0 end,
        window_tokens = window_tokens + case when v_windowed then v_tokens else 0 end
      where model_id = r.model_id;
      return jsonb_build_object('granted', true, 'id', v_permit::text, 'holdsSlot', v_cap is not null);
    end $$`,

  sql`
    create function cairn_capacity_renew(a jsonb) returns void
    language plpgsql as $$
    declare
      r cairn_capacity_models;
      v_now timestamptz;
    begin
      r := cairn_capacity_lock(a->>'model', false);
      if r.model_id is null then
        return;
      end if;
      v_now := clock_timestamp();
      r := cairn_capacity_prune(r, v_now, a);
      update cairn_capacity_slots
      set lease_until = v_now + (a->>'leaseMs')::double precision * interval '1 millisecond'
      where model_id = r.model_id and permit_id = (a->>'permitId')::bigint;
    end $$`,

  sql`
    create function cairn_capacity_release(a jsonb) returns void
    language plpgsql as $$
    declare
      r cairn_capacity_models;
      v_now timestamptz;
      v_permit bigint := (a->>'permitId')::bigint;
      v_used bigint := round((a->>'usedTokens')::numeric);
      v_granted_at timestamptz;
      v_hold double precision;
      v_estimate bigint;
      v_cap double precision;
    begin
      r := cairn_capacity_lock(a->>'model', false);
      if r.model_id is null then
        return;
      end if;
      v_now := clock_timestamp();
      r := cairn_capacity_prune(r, v_now, a);
      delete from cairn_capacity_slots where model_id = r.model_id and permit_id = v_permit
      returning granted_at into v_granted_at;
      if v_granted_at is not null then
        v_hold := cairn_capacity_ms(v_now - v_granted_at);
        r.avg_hold_ms := coalesce(r.avg_hold_ms * 0.8 + v_hold * 0.2, v_hold);
      end if;
      -- The request counts in the window from its end, never before the provider received it.
      update cairn_capacity_grants set granted_at = v_now
      where model_id = r.model_id and permit_id = v_permit;
      if v_used is not null then
        -- Nothing when the grant has left the window already.
        update cairn_capacity_grants g set tokens = v_used
        from cairn_capacity_grants old
        where g.model_id = r.model_id and g.permit_id = v_permit
          and old.model_id = g.model_id and old.permit_id = g.permit_id
        returning old.tokens into v_estimate;
        r.window_tokens := r.window_tokens + coalesce(v_used - v_estimate, 0);
      end if;
      if (a->>'ok')::boolean and r.adaptive_cap is not null then
        v_cap := r.adaptive_cap + 1 / r.adaptive_cap;
        r.adaptive_cap := case
          when v_cap >= r.configured_concurrency then null
          when r.configured_concurrency is null and v_cap > 1000 then null
          else v_cap
        end;
      end if;
      update cairn_capacity_models
      set avg_hold_ms = r.avg_hold_ms, window_tokens = r.window_tokens, adaptive_cap = r.adaptive_cap
      where model_id = r.model_id;
    end $$`,

  sql`
    create function cairn_capacity_rate_limited(a jsonb) returns double precision
    language plpgsql as $$
    declare
      v_concurrency double precision := (a->>'concurrency')::double precision;
      v_permit bigint := (a->>'permitId')::bigint;
      -- The provider's pause, as the engine's pauseMsOf reads its 429.
      v_pause double precision := (a->>'pauseMs')::double precision;
      v_cap double precision;
      r cairn_capacity_models;
      v_now timestamptz;
    begin
      r := cairn_capacity_lock(a->>'model', true);
      v_now := clock_timestamp();
      r := cairn_capacity_prune(r, v_now, a);
      if not coalesce(r.paused_until > v_now, false) then
        -- First 429 of this pause: halve the cap in force, or the requests in flight when none is.
        v_cap := least(v_concurrency, r.adaptive_cap);
        if v_cap is null then
          select count(*) + 1 into v_cap
          from cairn_capacity_slots where model_id = r.model_id and permit_id <> v_permit;
        end if;
        r.adaptive_cap := greatest(1, floor(v_cap / 2));
      end if;
      r.paused_until := greatest(r.paused_until, v_now + v_pause * interval '1 millisecond');
      delete from cairn_capacity_slots where model_id = r.model_id and permit_id = v_permit;
      update cairn_capacity_models
      set adaptive_cap = r.adaptive_cap, paused_until = r.paused_until,
        configured_concurrency = v_concurrency
      where model_id = r.model_id;
      return greatest(0, ceil(cairn_capacity_ms(r.paused_until - v_now)));
    end $$`,

  sql`
    create function cairn_capacity_leave(a jsonb) returns void
    language plpgsql as $$
    declare
      r cairn_capacity_models;
    begin
      r := cairn_capacity_lock(a->>'model', false);
      if r.model_id is null then
        return;
      end if;
      r := cairn_capacity_prune(r, clock_timestamp(), a);
      delete from cairn_capacity_waiters where model_id = r.model_id and waiter_id = a->>'waiterId';
    end $$`,

  // Every model seen, by name; reads without locks or pruning (counts only live rows).
  sql`
    create function cairn_capacity_snapshot(a jsonb) returns jsonb
    language sql as $$
      select coalesce(jsonb_agg(jsonb_strip_nulls(jsonb_build_object(
        'model', m.model,
        'waiting', (
          select count(*) from cairn_capacity_waiters w
          where w.model_id = m.model_id
            and w.last_seen >= c.now - (a->>'waiterTtlMs')::double precision * interval '1 millisecond'),
        'inFlight', (
          select count(*) from cairn_capacity_slots s
          where s.model_id = m.model_id and s.lease_until > c.now),
        'concurrencyLimit', floor(least(m.configured_concurrency, m.adaptive_cap)),
        'pausedForMs', greatest(0, coalesce(ceil(cairn_capacity_ms(m.paused_until - c.now)), 0))
      )) order by m.model), '[]'::jsonb)
      from cairn_capacity_models m
      cross join (select clock_timestamp() as now) c
    $$`,
];
