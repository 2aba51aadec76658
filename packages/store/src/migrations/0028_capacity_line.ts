import { sql } from 'kysely';
import type { Kysely } from 'kysely';

/**
 * Runs wait in a model's line while parked (issue #30): the Postgres limiter keeps a parked
 * waiter in line until it is expected back (`PostgresModelCapacity.hold` records its last ask in
 * the future), and its place counts toward how long the waiters behind it are told to wait, so
 * parked runs come back spread over the time the limit frees, in fair order. While room is free
 * now, a grant goes by fair order among the waiters that ask (those held in line are not there to
 * take it, and are not waited for). `cairn_capacity_position` gets an overload that counts only
 * the waiters that asked by a time, and `cairn_capacity_try_acquire` of `0009_b_model_capacity`
 * is restated with that change; `cairn_capacity_wake` names the held waiters that free room lets
 * in, for the workers to bring their runs back at once (the Redis scripts do the same).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await POSITION_ASKING_BY.execute(db);
  await TRY_ACQUIRE_IN_LINE.execute(db);
  await WAKE.execute(db);
}

/** `cairn_capacity_try_acquire` as `0009_b_model_capacity` made it; the overload dropped. */
export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop function cairn_capacity_wake(jsonb)`.execute(db);
  await TRY_ACQUIRE_BEFORE.execute(db);
  await sql`drop function cairn_capacity_position(integer, text, double precision, timestamptz)`.execute(
    db,
  );
}

/**
 * The waiter's place (0 first) in the fair order of the model's waiters, as the 3-argument
 * function of `0009_b_model_capacity` computes it, counting only the waiters whose last ask is
 * at or before `p_asking_by` (null: every waiter in line).
 */
const POSITION_ASKING_BY = sql`
    create function cairn_capacity_position(
      p_model_id integer, p_waiter text, p_global_vt double precision, p_asking_by timestamptz)
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
        where model_id = p_model_id and (p_asking_by is null or last_seen <= p_asking_by)
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
    end $$`;

/** The grant decides by the waiters asking; a refusal's wait counts every waiter in line. */
export const TRY_ACQUIRE_IN_LINE = sql`
    create or replace function cairn_capacity_try_acquire(a jsonb) returns jsonb
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
      v_asking integer;
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

      -- The caller's place: among every waiter in line for how long a refusal tells it to wait
      -- (parked waiters held in line included), among those asking now for a grant while room is free.
      if v_room is not null then
        select count(*), count(*) filter (where last_seen <= v_now) into v_waiters, v_asking
        from cairn_capacity_waiters where model_id = r.model_id;
        if v_room <= 0 and v_waiters > 1 then
          v_position := cairn_capacity_position(r.model_id, v_waiter, r.global_vt, null);
        elsif v_room > 0 and v_asking > 1 then
          v_position := cairn_capacity_position(r.model_id, v_waiter, r.global_vt, v_now);
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
    end $$`;

/** As `0009_b_model_capacity` made it. */
const TRY_ACQUIRE_BEFORE = sql`
    create or replace function cairn_capacity_try_acquire(a jsonb) returns jsonb
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
    end $$`;

/**
 * `PostgresModelCapacity.wake`: the held waiters (last ask in the future) that the room free now
 * lets in beyond the waiters asking, in fair order (the order of `cairn_capacity_position`), none
 * while the model is paused; each marked as asking now. Returns their ids as a JSON array.
 */
export const WAKE = sql`
    create function cairn_capacity_wake(a jsonb) returns jsonb
    language plpgsql as $$
    declare
      v_concurrency double precision := (a->>'concurrency')::double precision;
      v_rpm double precision := (a->>'requestsPerMinute')::double precision;
      v_tpm double precision := (a->>'tokensPerMinute')::double precision;
      r cairn_capacity_models;
      v_now timestamptz;
      v_cap double precision;
      v_room double precision;
      v_held integer;
      v_asking integer;
      w_ids text[];
      w_weights double precision[];
      t_next integer[];
      t_last integer[];
      t_start double precision[];
      v_best integer;
      v_woken text[] := '{}';
    begin
      r := cairn_capacity_lock(a->>'model', false);
      if r.model_id is null then
        return '[]'::jsonb;
      end if;
      v_now := clock_timestamp();
      r := cairn_capacity_prune(r, v_now, a);
      if r.paused_until > v_now then
        return '[]'::jsonb;
      end if;
      select count(*) filter (where last_seen > v_now), count(*) filter (where last_seen <= v_now)
      into v_held, v_asking
      from cairn_capacity_waiters where model_id = r.model_id;
      if v_held = 0 then
        return '[]'::jsonb;
      end if;
      v_room := v_held;
      v_cap := least(v_concurrency, r.adaptive_cap);
      if v_cap is not null then
        v_room := least(v_room, floor(v_cap)
          - (select count(*) from cairn_capacity_slots where model_id = r.model_id));
      end if;
      if v_rpm is not null then
        v_room := least(v_room, floor(v_rpm) - r.window_requests);
      end if;
      if v_tpm is not null and r.window_tokens >= v_tpm then
        v_room := 0;
      end if;
      v_room := v_room - v_asking;
      if v_room <= 0 then
        return '[]'::jsonb;
      end if;
      with ordered as (
        select waiter_id, tenant, weight,
          row_number() over (
            order by tenant collate "C", priority, since, waiter_id collate "C") as n
        from cairn_capacity_waiters
        where model_id = r.model_id and last_seen > v_now
      ),
      waiting_tenants as (
        select o.tenant, min(o.n)::integer as first, max(o.n)::integer as last,
          greatest(coalesce(max(t.vt), r.global_vt), r.global_vt) as start_tag
        from ordered o
        left join cairn_capacity_tenants t on t.model_id = r.model_id and t.tenant = o.tenant
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
      while coalesce(array_length(v_woken, 1), 0) < v_room loop
        v_best := null;
        for i in 1 .. coalesce(array_length(t_next, 1), 0) loop
          if t_next[i] <= t_last[i] and (v_best is null or t_start[i] < t_start[v_best]) then
            v_best := i;
          end if;
        end loop;
        exit when v_best is null;
        v_woken := v_woken || w_ids[t_next[v_best]];
        t_start[v_best] := t_start[v_best] + 1 / w_weights[t_next[v_best]];
        t_next[v_best] := t_next[v_best] + 1;
      end loop;
      update cairn_capacity_waiters set last_seen = v_now
      where model_id = r.model_id and waiter_id = any(v_woken);
      return to_jsonb(v_woken);
    end $$`;
