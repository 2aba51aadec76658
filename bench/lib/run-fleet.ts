import { sql, type Kysely } from 'kysely';
import { closeSearchChunks, type Database } from '@cairn/store';

/** Top-level runs of the fleet the read sections read at scale. */
export const FLEET_RUNS = 100_000;
/** The fleet's tenants, a quarter of its runs each. */
export const FLEET_TENANTS = ['acme', 'globex', 'initech', 'umbrella'] as const;

/**
 * Stores a fleet of {@link FLEET_RUNS} top-level runs on a migrated, empty
 * database, as 30 days of traffic leave it: 90% COMPLETED, 5% ERROR, 3%
 * RUNNING (1 in 300 parked for capacity), 2% PAUSED, created every 26 s,
 * {@link FLEET_TENANTS} tenants; one attempt per run and a recovery for 1 in
 * 50; a pending action on each PAUSED run and a decided one on 1 in 10; 30
 * days of spend per tenant and per tenant and model; the search's full chunks
 * indexed (`closeSearchChunks`); then `vacuum analyze`.
 */
export async function storeRunFleet(db: Kysely<Database>): Promise<void> {
  await sql`
    insert into sessions (session_id, tenant_id)
    select 's' || g, (array['acme','globex','initech','umbrella'])[1 + g % 4]
      from generate_series(0, ${FLEET_RUNS / 100 - 1}) g`.execute(db);
  // Mostly finished, a few live ones, ~1 in 700 created in the last hour.
  await sql`
    insert into runs (run_id, session_id, tenant_id, entity_kind, entity_name, status, input,
                      checkpoint, waiting, created_at, updated_at)
    select 'r' || g, 's' || (g / 100), (array['acme','globex','initech','umbrella'])[1 + (g / 100) % 4],
           'agent', (array['researcher','writer','critic'])[1 + g % 3],
           (case when g % 100 < 90 then 'COMPLETED' when g % 100 < 95 then 'ERROR'
                 when g % 100 < 98 then 'RUNNING' else 'PAUSED' end),
           'Research ' || (array['cairns','glaciers','tides','lichens','moraines','fjords','eskers'])[1 + g % 7]
             || ' in region ' || g || ' and write a short brief', 'tool-batch',
           (case when g % 300 = 95 then jsonb_build_object('for', 'capacity', 'model', 'openai-chat:gpt-x', 'until', now()) end),
           now() - (g * interval '26 seconds'),
           now() - (g * interval '26 seconds') + interval '20 seconds'
      from generate_series(0, ${FLEET_RUNS - 1}) g`.execute(db);
  // One attempt per run, a second one for 1 run in 50 that took over from a dead worker.
  await sql`
    insert into run_attempts (run_id, epoch, worker_id, reason, started_at, ended_at, outcome)
    select 'r' || g, 1, 'w' || g % 8, 'run', now() - (g * interval '26 seconds'),
           now() - (g * interval '26 seconds') + interval '20 seconds', 'completed'
      from generate_series(0, ${FLEET_RUNS - 1}) g
    union all
    select 'r' || g, 2, 'w' || (g + 1) % 8, 'recovered', now() - (g * interval '26 seconds') + interval '10 seconds',
           null, null
      from generate_series(7, ${FLEET_RUNS - 1}, 50) g`.execute(db);
  // A pending action on each PAUSED run, a decided one on 1 run in 10.
  await sql`
    insert into pending_actions (action_id, kind, run_id, root_run_id, member_path, tool_call_id, tool,
                                 args, args_digest, batch, status, on_timeout, created_at)
    select 'a' || g, 'approval', 'r' || g, 'r' || g, '[]', 'c' || g, 'send_email', '{}', 'd', 1,
           (case when g % 100 >= 98 then 'pending' else 'decided' end), 'reject',
           now() - (g * interval '26 seconds')
      from generate_series(0, ${FLEET_RUNS - 1}) g
     where g % 100 >= 98 or g % 10 = 0`.execute(db);
  // 30 days of spend: each tenant's, and split over three models.
  await sql`
    insert into tenant_day_spend (tenant_id, day, cost_micro_usd)
    select t, (now() at time zone 'utc')::date - d, 1000000
      from unnest(array['acme','globex','initech','umbrella']) t, generate_series(0, 29) d`.execute(
    db,
  );
  await sql`
    insert into tenant_model_day_spend (day, tenant_id, model, cost_micro_usd)
    select (now() at time zone 'utc')::date - d, t, m, (array[500000, 300000, 200000])[i]
      from unnest(array['acme','globex','initech','umbrella']) t, generate_series(0, 29) d,
           unnest(array['openai:gpt-a','openai:gpt-b','openai-chat:local']) with ordinality as x(m, i)`.execute(
    db,
  );
  // As the workers' pass leaves the search's chunks: every full one indexed.
  await closeSearchChunks(db);
  // As autovacuum leaves a table at rest: statistics and the visibility map (index-only scans).
  await sql`vacuum analyze`.execute(db);
}
