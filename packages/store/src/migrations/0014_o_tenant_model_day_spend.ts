import { sql } from 'kysely';
import type { Kysely } from 'kysely';

/**
 * `tenant_model_day_spend`: what each tenant's runs cost per UTC day and
 * model, in integer micro-dollars, added to by the same fenced statement
 * that adds to `tenant_day_spend` (each model's part of the commit's cost
 * delta, when positive), for the fleet overview's spend by tenant and model.
 * Keyed by day first: the overview reads one day's rows. Days before this
 * migration have no rows here (their totals stay in `tenant_day_spend`).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create table tenant_model_day_spend (
    day date not null,
    tenant_id text not null,
    model text not null,
    cost_micro_usd bigint not null default 0 check (cost_micro_usd >= 0),
    primary key (day, tenant_id, model)
  )`.execute(db);
}

/** Drops the table. */
export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table tenant_model_day_spend`.execute(db);
}
