import { sql } from 'kysely';
import type { Kysely } from 'kysely';

/**
 * Gives `runs` back the `fillfactor = 80` of 0004_lean_commit (room in each
 * page for a checkpoint's HOT update), which 0032_w_run_states_back reset to
 * the default of 100 when it took back 0031_w's 90.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table runs set (fillfactor = 80)`.execute(db);
}

/** Leaves `runs` as 0032_w left it. */
export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table runs reset (fillfactor)`.execute(db);
}
