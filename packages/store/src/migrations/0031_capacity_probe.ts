import type { Kysely } from 'kysely';
import { tryAcquirePaced } from './0030_paced_grants.js';

/**
 * A run brought back from a park asks before it is claimed (issue #30): `cairn_capacity_try_acquire`
 * takes `probe`, and a probe that would be granted takes nothing (no permit, no slot, no window
 * entry, no turn of the fair order) and answers granted with no permit id, the caller left in line
 * as asking now (`PostgresModelCapacity.ready`; the Redis acquire script does the same). Restates the
 * function of `0030_paced_grants` with that one branch.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await tryAcquirePaced(true).execute(db);
}

/** The function as `0030_paced_grants` made it. */
export async function down(db: Kysely<unknown>): Promise<void> {
  await tryAcquirePaced(false).execute(db);
}
