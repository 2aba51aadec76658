import { sql } from 'kysely';
import type { Kysely } from 'kysely';

/**
 * Indexes for the fleet overview (`readFleetOverview`), so that each of its
 * counts reads what it counts, not the runs table:
 * - `runs_top_level_unfinished_idx`: top-level PENDING, RUNNING and PAUSED
 *   runs by status and tenant, for the counts of runs by status now (an
 *   index-only scan over the unfinished runs; a checkpoint changes neither
 *   column, a claim or a finish adds or removes one entry);
 * - `run_attempts_recovered_idx`: attempts that took over a dead worker's run
 *   (reason `recovered`) by start, for the last hour's recoveries (the
 *   other attempts add no entry to it);
 * - `tenant_day_spend_day_idx`: the spend ledger by day, for today's rows of
 *   every tenant (its primary key leads with the tenant).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create index runs_top_level_unfinished_idx on runs (status, tenant_id)
    where parent_run_id is null and status in ('PENDING', 'RUNNING', 'PAUSED')`.execute(db);
  await sql`create index run_attempts_recovered_idx on run_attempts (started_at)
    where reason = 'recovered'`.execute(db);
  await sql`create index tenant_day_spend_day_idx on tenant_day_spend (day)`.execute(db);
}

/** Drops the indexes. */
export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop index tenant_day_spend_day_idx`.execute(db);
  await sql`drop index run_attempts_recovered_idx`.execute(db);
  await sql`drop index runs_top_level_unfinished_idx`.execute(db);
}
