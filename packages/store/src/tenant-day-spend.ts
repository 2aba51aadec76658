import { sql } from 'kysely';
import type { Kysely } from 'kysely';
import type { TenantDaySpend } from '@cairn/engine/store';
import type { Database } from './schema.js';

/**
 * The tenant's spend on the current UTC day by the database's clock (what
 * `writeDelta` counted from its runs' commits; 0 before any), and the whole
 * seconds until the next UTC day: one read of its `tenant_day_spend` row.
 */
export async function readTenantDaySpend(
  db: Kysely<Database>,
  tenantId: string,
): Promise<TenantDaySpend> {
  const { rows } = await sql<{ day: string; cost: number; seconds_left: number }>`
    with today as (select now() at time zone 'utc' as at)
    select today.at::date::text as day,
           coalesce(s.cost_micro_usd, 0) as cost,
           greatest(1, ceil(extract(epoch from (date_trunc('day', today.at) + interval '1 day' - today.at))))::int as seconds_left
      from today
      left join tenant_day_spend s on s.tenant_id = ${tenantId} and s.day = today.at::date`.execute(
    db,
  );
  const row = rows[0]!;
  return { day: row.day, costMicroUsd: Number(row.cost), secondsToNextDay: row.seconds_left };
}
