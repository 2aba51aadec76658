import { sql } from 'kysely';
import type { Kysely } from 'kysely';

/** An index for the run list: top-level runs newest first, so a page reads its rows instead of sorting every run. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createIndex('runs_top_level_created_idx')
    .on('runs')
    .columns(['created_at desc', 'run_id desc'])
    .where(sql.ref('parent_run_id'), 'is', null)
    .execute();
}

/** Drops the index. */
export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('runs_top_level_created_idx').execute();
}
