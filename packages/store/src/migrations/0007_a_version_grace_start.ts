import type { Kysely } from 'kysely';

/**
 * Adds `runs.awaiting_deploy_since`: when a worker first left the run for
 * another (its entity missing from the worker's registry, or defined
 * otherwise) since the run last changed. The version grace period counts
 * from it, so a run queued, or running, long before a deploy still gets the
 * whole period for a worker with its definition.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('runs').addColumn('awaiting_deploy_since', 'timestamptz').execute();
}

/** Drops what {@link up} added. */
export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('runs').dropColumn('awaiting_deploy_since').execute();
}
