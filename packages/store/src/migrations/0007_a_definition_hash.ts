import type { Kysely } from 'kysely';

/**
 * Adds `runs.definition_hash`, the digest of the entity's definition a run was
 * created (or last resumed) on (null on older rows: stamped by their next
 * claim), and `run_continue_requests.upgrade`, set by `continue { upgrade:
 * true }`: the execution that takes the request may resume the run on a
 * changed definition.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('runs').addColumn('definition_hash', 'text').execute();
  await db.schema
    .alterTable('run_continue_requests')
    .addColumn('upgrade', 'boolean', (c) => c.notNull().defaultTo(false))
    .execute();
}

/** Drops what {@link up} added. */
export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('run_continue_requests').dropColumn('upgrade').execute();
  await db.schema.alterTable('runs').dropColumn('definition_hash').execute();
}
