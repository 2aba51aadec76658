import { sql } from 'kysely';
import type { Kysely, RawBuilder } from 'kysely';
import { TRY_ACQUIRE_IN_LINE, WAKE } from './0028_capacity_line.js';

/**
 * Grants paced across the rate window (issue #30, docs/capacity.md "Paced grants"): with a
 * requests-per-minute limit, the model keeps the paced time of its next grant (`paced_until`, the
 * generic cell rate algorithm's theoretical arrival time); a grant may go while that time is at most
 * the pacing's tolerance ahead of now and moves it one step on, so a window's requests are spread
 * over it rather than spent in a burst and then nobody granted until its oldest leave. The step and
 * tolerance come with each call (`paceStepMs`, `paceToleranceMs`: `requestPacing` of @cairn/engine,
 * the one rule both limiters apply; the Redis scripts do the same). Restates
 * `cairn_capacity_try_acquire` and `cairn_capacity_wake` of `0028_capacity_line` with the pacing.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table cairn_capacity_models add column paced_until timestamptz`.execute(db);
  await PACED_ROOM.execute(db);
  await tryAcquirePaced(false).execute(db);
  await WAKE_PACED.execute(db);
}

/** The functions as `0028_capacity_line` made them; the column and the helper dropped. */
export async function down(db: Kysely<unknown>): Promise<void> {
  await TRY_ACQUIRE_IN_LINE.execute(db);
  await sql`drop function cairn_capacity_wake(jsonb)`.execute(db);
  await WAKE.execute(db);
  await sql`drop function cairn_capacity_paced_room(timestamptz, timestamptz, double precision, double precision)`.execute(
    db,
  );
  await sql`alter table cairn_capacity_models drop column paced_until`.execute(db);
}

/**
 * How many grants the pacing lets go at `p_now` with the next paced at `p_next` (never before
 * `p_now`): none while it is more than the tolerance ahead, else one and one more per step of the
 * tolerance left.
 */
const PACED_ROOM = sql`
    create function cairn_capacity_paced_room(
      p_next timestamptz, p_now timestamptz, p_step double precision, p_tolerance double precision)
    returns double precision
    language sql immutable as $$
      select case when cairn_capacity_ms(p_next - p_now) > p_tolerance then 0
        else floor((p_tolerance - cairn_capacity_ms(p_next - p_now)) / p_step) + 1 end
    $$`;

/**
 * `cairn_capacity_try_acquire` of `0028_capacity_line`, paced: the room is also what the pacing lets
 * go now, a refusal by the pacing tells the caller its paced slot, and a grant moves the paced time on.
 * `probe` (`0031_capacity_probe`): a call with `probe` true that would be granted takes nothing and
 * answers granted with no permit id (`PostgresModelCapacity.ready`); false, the function as this
 * migration made it.
 */
export function tryAcquirePaced(probe: boolean): RawBuilder<unknown> {
  return sql`
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
      v_step double precision := (a->>'paceStepMs')::double precision;
      v_tolerance double precision := coalesce((a->>'paceToleranceMs')::double precision, 0);
      v_paced double precision;
      v_next timestamptz;
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
      if v_step is not null then
        v_next := greatest(coalesce(r.paced_until, v_now), v_now);
        v_paced := cairn_capacity_paced_room(v_next, v_now, v_step, v_tolerance);
        if v_paced < v_room then
          v_room := v_paced;
          v_kind := 'paced';
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
        elsif v_kind = 'paced' then
          -- The caller's paced slot: as many steps after the next paced grant as waiters ahead of it
          -- (or, when the window is full too, until its oldest grants leave it, as below).
          v_need := r.window_requests - floor(v_rpm) + 1 + v_position;
          if v_need > 0 then
            select granted_at into v_at from cairn_capacity_grants
            where model_id = r.model_id
            order by granted_at, permit_id
            offset greatest(0, least(v_need, r.window_requests) - 1)::integer
            limit 1;
          end if;
          return cairn_capacity_refusal('requests', greatest(
            cairn_capacity_ms(v_next - v_now) - v_tolerance + v_position * v_step,
            coalesce(cairn_capacity_ms(v_at + v_window - v_now), 0)));
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
        -- Paced: the caller's slot, as many steps after the room free now as the picks ahead of it beyond it.
        return cairn_capacity_refusal('fairness', greatest(least(100, 25 * (v_position - v_room + 1)),
          case when v_kind = 'paced'
            then cairn_capacity_ms(v_next - v_now) - v_tolerance + v_position * v_step else 0 end));
      end if;

${sql.raw(probe ? PROBE : '')}      -- Granted.
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
        paced_until = case when v_step is null then paced_until
          else v_next + v_step * interval '1 millisecond' end,
        window_requests = window_requests + case when v_windowed then 1 else 0 end,
        window_tokens = window_tokens + case when v_windowed then v_tokens else 0 end
      where model_id = r.model_id;
      return jsonb_build_object('granted', true, 'id', v_permit::text, 'holdsSlot', v_cap is not null);
    end $$`;
}

/** A probe that would be granted takes nothing: the caller stays in line as asking now. */
const PROBE = `      if coalesce((a->>'probe')::boolean, false) then
        return jsonb_build_object('granted', true, 'id', '', 'holdsSlot', false);
      end if;
`;

/** `cairn_capacity_wake` of `0028_capacity_line`, its room also what the pacing lets go now. */
const WAKE_PACED = sql`
    create or replace function cairn_capacity_wake(a jsonb) returns jsonb
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
      v_step double precision := (a->>'paceStepMs')::double precision;
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
      if v_step is not null then
        v_room := least(v_room, cairn_capacity_paced_room(
          greatest(coalesce(r.paced_until, v_now), v_now), v_now, v_step,
          coalesce((a->>'paceToleranceMs')::double precision, 0)));
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
