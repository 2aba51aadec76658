import { sql } from 'kysely';
import type { Kysely } from 'kysely';
import type { Database } from './schema.js';

/** Minutes in the overview's hour: the current minute (so far) and the 59 before it. */
export const FLEET_HOUR_MINUTES = 60;

/** What top-level runs did in one minute. */
export interface FleetMinute {
  /** The minute's start (ISO 8601, UTC). */
  at: string;
  /** Runs created in the minute. */
  created: number;
  /** Runs that ended COMPLETED in the minute. */
  completed: number;
  /** Runs that ended in ERROR in the minute. */
  error: number;
  /** Attempts that took a run over from a dead worker in the minute (reason `recovered`). */
  recovered: number;
}

/** The last hour of top-level runs, minute by minute, with its totals. */
export interface FleetHour {
  /** The first minute's start (ISO 8601): the hour is `since` until now. */
  since: string;
  /** {@link FLEET_HOUR_MINUTES} minutes, oldest first, the last one the current (partial) minute. */
  minutes: FleetMinute[];
  /** The minutes' sums. */
  created: number;
  completed: number;
  error: number;
  recovered: number;
  /** Creation to end of the runs that ended COMPLETED or ERROR in the hour; null when none did. */
  durationP50Ms: number | null;
  durationP95Ms: number | null;
}

type Counts = Record<string, number> | null;

/**
 * The last hour of top-level runs (a tenant's, or every one), per minute, by
 * the database's clock, in one statement (so every part has the same hour):
 * creations through the creation indexes, ends (COMPLETED, ERROR) through
 * `runs_top_level_status_updated_idx` (a finished run's last update is its
 * end), and recoveries through `run_attempts_recovered_idx`. Each reads the
 * hour's rows only.
 */
export async function readFleetHour(
  db: Kysely<Database>,
  tenantId: string | undefined,
): Promise<FleetHour> {
  const ofTenant = (column: string) =>
    tenantId === undefined ? sql`` : sql`and ${sql.ref(column)} = ${tenantId}`;
  const { rows } = await sql<{
    since: Date;
    created: Counts;
    completed: Counts;
    error: Counts;
    recovered: Counts;
    p50: number | null;
    p95: number | null;
  }>`
    with win as (select date_trunc('minute', now()) - ${`${FLEET_HOUR_MINUTES - 1} minutes`}::interval as since),
    created as (
      select extract(epoch from date_trunc('minute', r.created_at))::bigint as m, count(*)::int as n
        from runs r, win
       where r.parent_run_id is null and r.created_at >= win.since ${ofTenant('r.tenant_id')}
       group by 1),
    -- The hour's ends, read by (status, updated_at); a tenant's are picked from these (materialized:
    -- a tenant index holds all of the tenant's runs, the hour's ends are few).
    ended as materialized (
      select r.status, r.tenant_id, extract(epoch from date_trunc('minute', r.updated_at))::bigint as m,
             extract(epoch from (r.updated_at - r.created_at)) * 1000 as ms
        from runs r, win
       where r.parent_run_id is null and r.status in ('COMPLETED', 'ERROR') and r.updated_at >= win.since),
    ended_here as (select * from ended where true ${ofTenant('tenant_id')}),
    recovered as (
      select extract(epoch from date_trunc('minute', a.started_at))::bigint as m, count(*)::int as n
        from run_attempts a join runs r on r.run_id = a.run_id, win
       where a.reason = 'recovered' and a.started_at >= win.since and r.parent_run_id is null
             ${ofTenant('r.tenant_id')}
       group by 1)
    select win.since,
           (select jsonb_object_agg(m, n) from created) as created,
           (select jsonb_object_agg(m, n) from (select m, count(*)::int as n from ended_here
             where status = 'COMPLETED' group by m) c) as completed,
           (select jsonb_object_agg(m, n) from (select m, count(*)::int as n from ended_here
             where status = 'ERROR' group by m) e) as error,
           (select jsonb_object_agg(m, n) from recovered) as recovered,
           (select percentile_cont(0.5) within group (order by ms) from ended_here) as p50,
           (select percentile_cont(0.95) within group (order by ms) from ended_here) as p95
      from win`.execute(db);
  const row = rows[0]!;
  const since = row.since.getTime();
  const minutes: FleetMinute[] = [];
  for (let i = 0; i < FLEET_HOUR_MINUTES; i++) {
    const at = since + i * 60_000;
    const key = String(at / 1000);
    minutes.push({
      at: new Date(at).toISOString(),
      created: row.created?.[key] ?? 0,
      completed: row.completed?.[key] ?? 0,
      error: row.error?.[key] ?? 0,
      recovered: row.recovered?.[key] ?? 0,
    });
  }
  const sum = (key: 'created' | 'completed' | 'error' | 'recovered') =>
    minutes.reduce((total, minute) => total + minute[key], 0);
  return {
    since: row.since.toISOString(),
    minutes,
    created: sum('created'),
    completed: sum('completed'),
    error: sum('error'),
    recovered: sum('recovered'),
    durationP50Ms: row.p50 === null ? null : Math.round(Number(row.p50)),
    durationP95Ms: row.p95 === null ? null : Math.round(Number(row.p95)),
  };
}
