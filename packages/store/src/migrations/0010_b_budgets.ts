import { sql } from 'kysely';
import type { Kysely } from 'kysely';

/**
 * Budgets: `runs.budget` (what a root run's tree may spend: `{ maxTokens?, maxCostMicroUsd? }`,
 * raised by an approved budget action), `served_entities.budget` (an entity's default budget,
 * as its workers announce it) and pending actions of kind `budget` (a run paused before a
 * model request that would pass it). Neither rewrites a table.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table runs add column budget jsonb`.execute(db);
  await sql`alter table served_entities add column budget jsonb`.execute(db);
  await sql`alter table pending_actions drop constraint pending_actions_kind_check`.execute(db);
  await sql`alter table pending_actions add constraint pending_actions_kind_check check (kind in ('approval', 'external', 'budget')) not valid`.execute(
    db,
  );
}

/** Drops the column; budget actions must be gone first. */
export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table pending_actions drop constraint pending_actions_kind_check`.execute(db);
  await sql`alter table pending_actions add constraint pending_actions_kind_check check (kind in ('approval', 'external'))`.execute(
    db,
  );
  await sql`alter table served_entities drop column budget`.execute(db);
  await sql`alter table runs drop column budget`.execute(db);
}
