import { sql } from 'kysely';
import type { Kysely } from 'kysely';

/** An index for retention: top-level runs by status and last update, so a prune batch reads only what it deletes. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createIndex('runs_top_level_status_updated_idx')
    .on('runs')
    .columns(['status', 'updated_at'])
    .where(sql.ref('parent_run_id'), 'is', null)
    .execute();
}

/** Drops the index. */
export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('runs_top_level_status_updated_idx').execute();
}
