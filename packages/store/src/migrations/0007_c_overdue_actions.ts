import { sql } from 'kysely';
import type { Kysely } from 'kysely';

/** An index for the reconciler's sweep of overdue actions: undecided actions by expiry, so a pass reads only what is due. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createIndex('pending_actions_undecided_expiry_idx')
    .on('pending_actions')
    .column('expires_at')
    .where(sql.ref('status'), '=', 'pending')
    .execute();
}

/** Drops the index. */
export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('pending_actions_undecided_expiry_idx').execute();
}
