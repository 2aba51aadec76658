import { sql } from 'kysely';
import type { Kysely } from 'kysely';

/**
 * Model capacity on the run row: `priority` (1 highest to 10, as created; it orders a tenant's runs
 * waiting for a model's permits and is its jobs' BullMQ priority) and `waiting` (what a run parked
 * for capacity waits for: `{ for: 'capacity', model, until }`, set by the park's fenced write and
 * cleared by the next claim). Neither rewrites `runs` (the check reads it once).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table runs add column priority smallint not null default 5 check (priority between 1 and 10)`.execute(
    db,
  );
  await sql`alter table runs add column waiting jsonb`.execute(db);
}

/** Drops the columns. */
export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table runs drop column waiting`.execute(db);
  await sql`alter table runs drop column priority`.execute(db);
}
