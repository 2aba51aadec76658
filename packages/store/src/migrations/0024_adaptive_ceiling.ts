import { sql } from 'kysely';
import type { Kysely, RawBuilder } from 'kysely';

/**
 * Adaptive limits that remember (issue #30): the Postgres limiter's 429 halves the cap in force
 * as before and now also records that cap (`adaptive_ceiling`) until `adaptive_ceiling_until`
 * (the limiter's `ceilingMemoryMs` later); while it is remembered, successes raise the adaptive
 * cap no higher than one below it, so the fleet stops probing the limit that answered 429 every
 * few dozen requests. Restates `cairn_capacity_release` and `cairn_capacity_rate_limited` of
 * `0009_b_model_capacity` with that change (the Redis scripts do the same).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table cairn_capacity_models
    add column adaptive_ceiling double precision,
    add column adaptive_ceiling_until timestamptz`.execute(db);
  await releaseFunction(true).execute(db);
  await rateLimitedFunction(true).execute(db);
}

/** The functions as `0009_b_model_capacity` made them (an adaptive cap grows back to the configured one). */
export async function down(db: Kysely<unknown>): Promise<void> {
  await releaseFunction(false).execute(db);
  await rateLimitedFunction(false).execute(db);
  await sql`alter table cairn_capacity_models
    drop column adaptive_ceiling, drop column adaptive_ceiling_until`.execute(db);
}

/** `cairn_capacity_release`; `remembers`: held below the remembered ceiling. */
function releaseFunction(remembers: boolean): RawBuilder<unknown> {
  return sql`
    create or replace function cairn_capacity_release(a jsonb) returns void
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
        v_cap := r.adaptive_cap + 1 / r.adaptive_cap;${
          remembers
            ? sql`
        -- Below the cap that drew the last 429 while the fleet remembers it.
        if r.adaptive_ceiling_until > v_now then
          v_cap := least(v_cap, greatest(1, r.adaptive_ceiling - 1));
        end if;`
            : sql``
        }
        r.adaptive_cap := case
          when v_cap >= r.configured_concurrency then null
          when r.configured_concurrency is null and v_cap > 1000 then null
          else v_cap
        end;
      end if;
      update cairn_capacity_models
      set avg_hold_ms = r.avg_hold_ms, window_tokens = r.window_tokens, adaptive_cap = r.adaptive_cap${
        remembers
          ? sql`,
        adaptive_ceiling = case when r.adaptive_cap is null then null else r.adaptive_ceiling end,
        adaptive_ceiling_until = case when r.adaptive_cap is null then null else r.adaptive_ceiling_until end`
          : sql``
      }
      where model_id = r.model_id;
    end $$`;
}

/** `cairn_capacity_rate_limited`; `remembers`: records the cap that drew the 429. */
function rateLimitedFunction(remembers: boolean): RawBuilder<unknown> {
  return sql`
    create or replace function cairn_capacity_rate_limited(a jsonb) returns double precision
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
        v_cap := least(v_concurrency, r.adaptive_cap);${
          remembers
            ? sql`
        -- A cap in force drew it: remembered, successes stay below it for a while. None was (its
        -- permits held no slot): the first cap is a guess, not remembered.
        r.adaptive_ceiling := floor(v_cap);
        r.adaptive_ceiling_until := case when v_cap is not null
          then v_now + (a->>'ceilingMemoryMs')::double precision * interval '1 millisecond' end;`
            : sql``
        }
        if v_cap is null then
          select count(*) + 1 into v_cap
          from cairn_capacity_slots where model_id = r.model_id and permit_id <> v_permit;
        end if;
        r.adaptive_cap := greatest(1, floor(v_cap / 2));
      end if;
      r.paused_until := greatest(r.paused_until, v_now + v_pause * interval '1 millisecond');
      delete from cairn_capacity_slots where model_id = r.model_id and permit_id = v_permit;
      update cairn_capacity_models
      set adaptive_cap = r.adaptive_cap, paused_until = r.paused_until,${
        remembers
          ? sql`
        adaptive_ceiling = r.adaptive_ceiling, adaptive_ceiling_until = r.adaptive_ceiling_until,`
          : sql``
      }
        configured_concurrency = v_concurrency
      where model_id = r.model_id;
      return greatest(0, ceil(cairn_capacity_ms(r.paused_until - v_now)));
    end $$`;
}
