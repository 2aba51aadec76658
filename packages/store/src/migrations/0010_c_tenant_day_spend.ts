import { sql } from 'kysely';
import type { Kysely } from 'kysely';

/**
 * Tenant day budgets (`CAIRN_TENANT_BUDGETS`):
 * - `tenant_day_spend`: what each tenant's runs cost per UTC day, in integer micro-dollars, added to
 *   by the fenced statement that commits each turn's usage (the commit's cost delta, when positive);
 *   producers read it before creating a tenant's run, workers every few seconds;
 * - `runs.tenant_budget_exempt_day`: the UTC day (`YYYY-MM-DD`) a person let the root run's tree go
 *   on past its tenant's spent day (an approved tenant budget action); null: none. Adding a
 *   nullable column rewrites no table.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create table tenant_day_spend (
    tenant_id text not null,
    day date not null,
    cost_micro_usd bigint not null default 0 check (cost_micro_usd >= 0),
    primary key (tenant_id, day)
  )`.execute(db);
  await sql`alter table runs add column tenant_budget_exempt_day text
    check (tenant_budget_exempt_day ~ '^[0-9]{4}-[0-9]{2}-[0-9]{2}$')`.execute(db);
}

/** Drops the column and the table. */
export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table runs drop column tenant_budget_exempt_day`.execute(db);
  await sql`drop table tenant_day_spend`.execute(db);
}
