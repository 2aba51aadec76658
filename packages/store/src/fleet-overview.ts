import { sql } from 'kysely';
import type { Kysely } from 'kysely';
import { RUN_STATUSES, usdOf, type RunStatus } from '@cairn/engine';
import type { Database } from './schema.js';

/** The fleet at a glance (the run list's overview): what runs now, what the last hour did, who spends. */
export interface FleetOverview {
  /** Top-level runs by status now. */
  byStatus: Record<RunStatus, number>;
  /** Top-level runs of the last hour: created, and ended COMPLETED or ERROR, with the ended ones' durations. */
  lastHour: {
    created: number;
    completed: number;
    error: number;
    /** Creation to end of the runs that ended in the hour; null when none did. */
    durationP50Ms: number | null;
    durationP95Ms: number | null;
  };
  /** Undecided actions: people the runs wait for. */
  pendingActions: number;
  /** RUNNING runs parked for a model's capacity, by model, most first. */
  waitingForCapacity: { model: string; runs: number }[];
  /** What each tenant's runs cost today (UTC), most first: the tenant day ledger. */
  spendToday: { tenant: string; costUsd: number }[];
}

/**
 * The fleet overview, for every run or one tenant's (a tenant-bound key's
 * view). Each figure is read through an index: runs by status and the last
 * hour's ends from `runs_top_level_status_updated_idx`, the hour's creations
 * from `runs_top_level_created_idx` (a tenant's from `runs_tenant_created_idx`),
 * parked runs through `runs_status_idx`, today's spend from its day's rows.
 */
export async function readFleetOverview(
  db: Kysely<Database>,
  scope: { tenantId?: string },
): Promise<FleetOverview> {
  const tenant = scope.tenantId;
  const ofTenant = tenant === undefined ? sql`` : sql`and tenant_id = ${tenant}`;
  const [statuses, hour, pending, waiting, spend] = await Promise.all([
    sql<{ status: RunStatus; n: number }>`
      select status, count(*)::int as n from runs
       where parent_run_id is null ${ofTenant}
       group by status`.execute(db),
    sql<{
      created: number;
      completed: number;
      error: number;
      p50: number | null;
      p95: number | null;
    }>`
      with ended as (
        select status, extract(epoch from (updated_at - created_at)) * 1000 as ms from runs
         where parent_run_id is null and status in ('COMPLETED', 'ERROR')
           and updated_at > now() - interval '1 hour' ${ofTenant}
      )
      select
        (select count(*)::int from runs
          where parent_run_id is null and created_at > now() - interval '1 hour' ${ofTenant}) as created,
        (select count(*)::int from ended where status = 'COMPLETED') as completed,
        (select count(*)::int from ended where status = 'ERROR') as error,
        (select percentile_cont(0.5) within group (order by ms) from ended) as p50,
        (select percentile_cont(0.95) within group (order by ms) from ended) as p95`.execute(db),
    sql<{ n: number }>`
      select count(*)::int as n from pending_actions a
       where a.status = 'pending'
         ${tenant === undefined ? sql`` : sql`and exists (select 1 from runs r where r.run_id = a.run_id and r.tenant_id = ${tenant})`}`.execute(
      db,
    ),
    sql<{ model: string; n: number }>`
      select waiting->>'model' as model, count(*)::int as n from runs
       where status = 'RUNNING' and waiting is not null ${ofTenant}
       group by 1 order by 2 desc, 1`.execute(db),
    sql<{ tenant_id: string; cost_micro_usd: string }>`
      select tenant_id, cost_micro_usd from tenant_day_spend
       where day = (now() at time zone 'utc')::date
         ${tenant === undefined ? sql`` : sql`and tenant_id = ${tenant}`}
       order by cost_micro_usd desc, tenant_id`.execute(db),
  ]);
  const byStatus = Object.fromEntries(RUN_STATUSES.map((s) => [s, 0])) as Record<RunStatus, number>;
  for (const row of statuses.rows) byStatus[row.status] = row.n;
  const h = hour.rows[0]!;
  return {
    byStatus,
    lastHour: {
      created: h.created,
      completed: h.completed,
      error: h.error,
      durationP50Ms: h.p50 === null ? null : Math.round(Number(h.p50)),
      durationP95Ms: h.p95 === null ? null : Math.round(Number(h.p95)),
    },
    pendingActions: pending.rows[0]?.n ?? 0,
    waitingForCapacity: waiting.rows.map((r) => ({ model: r.model, runs: r.n })),
    spendToday: spend.rows.map((r) => ({
      tenant: r.tenant_id,
      costUsd: usdOf(Number(r.cost_micro_usd)),
    })),
  };
}
