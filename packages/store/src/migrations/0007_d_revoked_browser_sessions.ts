import { sql } from 'kysely';
import type { Kysely } from 'kysely';

/**
 * Creates `revoked_browser_sessions`: the nonces of signed-out browser
 * sessions until their cookie would have expired anyway, so a copied cookie
 * opens nothing after its sign-out, on any producer.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('revoked_browser_sessions')
    .addColumn('nonce', 'text', (c) => c.primaryKey())
    .addColumn('expires_at', 'timestamptz', (c) => c.notNull())
    .addColumn('revoked_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema
    .createIndex('revoked_browser_sessions_expires_idx')
    .on('revoked_browser_sessions')
    .column('expires_at')
    .execute();
}

/** Drops `revoked_browser_sessions`. */
export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('revoked_browser_sessions').execute();
}
