import { sql } from 'kysely';
import type { Kysely } from 'kysely';
import { FINAL_STATUSES, RUN_STATUSES, usdOf, type RunStatus } from '@cairn/engine';
import { readFleetHour, type FleetHour } from './fleet-hour.js';
import type { Database } from './schema.js';

/** How far back the overview counts finished runs by status. */
export const FINISHED_WINDOW_HOURS = 24;

/** The fleet at a glance (the run list's overview): what runs now, what the last hour did, who spends. */
export interface FleetOverview {
  /**
   * Top-level runs by status: an unfinished status (PENDING, RUNNING, PAUSED)
   * counts every such run now, a final one (COMPLETED, ERROR, CANCELLED) the
   * runs that ended in it in the last {@link FINISHED_WINDOW_HOURS} hours.
   */
  byStatus: Record<RunStatus, number>;
  /** The last hour, minute by minute: creations, ends, recoveries, durations. */
  lastHour: FleetHour;
  /** Undecided actions: people the runs wait for. */
  pendingActions: number;
  /** Top-level RUNNING runs parked for a model's capacity, by model, most first. */
  waitingForCapacity: { model: string; runs: number }[];
  /** What each tenant's runs cost today (UTC), most first, and each model's part of it, most first (the day ledgers). */
  spendToday: { tenant: string; costUsd: number; byModel: { model: string; costUsd: number }[] }[];
}

const UNFINISHED = RUN_STATUSES.filter((s) => !FINAL_STATUSES.includes(s));
const listOf = (statuses: readonly RunStatus[]) => sql.join(statuses.map((s) => sql.lit(s)));

/**
 * The fleet overview, for every run or one tenant's (a tenant-bound key's
 * view). Every read is bounded by what it counts, through an index:
 * unfinished runs through `runs_top_level_unfinished_idx` (index only), the
 * day's finished runs and the hour's ends through
 * `runs_top_level_status_updated_idx`, the hour's creations through the
 * creation indexes, recoveries through `run_attempts_recovered_idx`, pending
 * actions through `pending_actions_undecided_expiry_idx`, parked runs through
 * `runs_status_idx`, today's spend through `tenant_day_spend_day_idx` and
 * the model ledger's primary key (day first).
 */
export async function readFleetOverview(
  db: Kysely<Database>,
  scope: { tenantId?: string },
): Promise<FleetOverview> {
  const tenant = scope.tenantId;
  const ofTenant = tenant === undefined ? sql`` : sql`and tenant_id = ${tenant}`;
  const [unfinished, finished, lastHour, pending, waiting, spend, modelSpend] = await Promise.all([
    // Literal statuses: the partial index's predicate is proven from them.
    sql<{ status: RunStatus; n: number }>`
      select status, count(*)::int as n from runs
       where parent_run_id is null and status in (${listOf(UNFINISHED)}) ${ofTenant}
       group by status`.execute(db),
    readFinishedLastDay(db, tenant),
    readFleetHour(db, tenant),
    // A tenant's: each pending action's run looked up by its key (a correlated subquery is run per
    // row, never turned into a join that would read the tenant's runs, or all of them).
    sql<{ n: number }>`
      select count(*)::int as n from pending_actions a
       where a.status = 'pending'
         ${tenant === undefined ? sql`` : sql`and (select r.tenant_id from runs r where r.run_id = a.run_id) = ${tenant}`}`.execute(
      db,
    ),
    sql<{ model: string; n: number }>`
      select waiting->>'model' as model, count(*)::int as n from runs
       where parent_run_id is null and status = 'RUNNING' and waiting is not null ${ofTenant}
       group by 1 order by 2 desc, 1`.execute(db),
    sql<{ tenant_id: string; cost_micro_usd: string }>`
      select tenant_id, cost_micro_usd from tenant_day_spend
       where day = (now() at time zone 'utc')::date ${ofTenant}
       order by cost_micro_usd desc, tenant_id`.execute(db),
    sql<{ tenant_id: string; model: string; cost_micro_usd: string }>`
      select tenant_id, model, cost_micro_usd from tenant_model_day_spend
       where day = (now() at time zone 'utc')::date ${ofTenant}
       order by cost_micro_usd desc, model`.execute(db),
  ]);
  const byStatus = Object.fromEntries(RUN_STATUSES.map((s) => [s, 0])) as Record<RunStatus, number>;
  for (const row of [...unfinished.rows, ...finished.rows]) byStatus[row.status] = row.n;
  return {
    byStatus,
    lastHour,
    pendingActions: pending.rows[0]?.n ?? 0,
    waitingForCapacity: waiting.rows.map((r) => ({ model: r.model, runs: r.n })),
    spendToday: spend.rows.map((r) => ({
      tenant: r.tenant_id,
      costUsd: usdOf(Number(r.cost_micro_usd)),
      byModel: modelSpend.rows
        .filter((m) => m.tenant_id === r.tenant_id)
        .map((m) => ({ model: m.model, costUsd: usdOf(Number(m.cost_micro_usd)) })),
    })),
  };
}

/**
 * Top-level runs that ended in a final status in the last
 * {@link FINISHED_WINDOW_HOURS} hours, by status: every run's from
 * `runs_top_level_status_updated_idx` alone (index only); a tenant's picked
 * from those rows (materialized: a tenant index would hold all of the
 * tenant's runs, the day's ends are few).
 */
function readFinishedLastDay(db: Kysely<Database>, tenant: string | undefined) {
  const finished = sql`parent_run_id is null and status in (${listOf(FINAL_STATUSES)})
    and updated_at >= now() - ${`${FINISHED_WINDOW_HOURS} hours`}::interval`;
  return tenant === undefined
    ? sql<{ status: RunStatus; n: number }>`
        select status, count(*)::int as n from runs where ${finished} group by status`.execute(db)
    : sql<{ status: RunStatus; n: number }>`
        with finished as materialized (select status, tenant_id from runs where ${finished})
        select status, count(*)::int as n from finished where tenant_id = ${tenant}
         group by status`.execute(db);
}
