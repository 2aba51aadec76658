import { sql } from 'kysely';
import type { RawBuilder } from 'kysely';
import { storedModelCost, storedUsageByModel } from './usage-column.js';

/**
 * The part of `writeDelta`'s statement that adds each model's share of the
 * commit's cost to its tenant's UTC day in `tenant_model_day_spend`: per
 * model of the run's usage (its `byModel`, after the fenced update, in
 * `run`), its cost minus what the row held before the statement (`prior_cost.by_model`),
 * when positive and the run has a tenant. Used beside the `tenant_day_spend`
 * upsert, whose `prior_cost` it reads: the two ledgers move together.
 */
export function tenantModelDaySpend(): RawBuilder<unknown> {
  const now = storedModelCost(sql`m.value`);
  const before = storedModelCost(sql`(prior_cost.by_model->m.key)`);
  return sql`tenant_model_spend as (
    insert into tenant_model_day_spend (day, tenant_id, model, cost_micro_usd)
    select (now() at time zone 'utc')::date, run.tenant_id, m.key, ${now} - ${before}
      from run, prior_cost, json_each(${storedUsageByModel(sql`run.usage`)}) m
     where run.tenant_id is not null and ${now} > ${before}
    on conflict (day, tenant_id, model) do update
      set cost_micro_usd = tenant_model_day_spend.cost_micro_usd + excluded.cost_micro_usd)`;
}
