import { sql } from 'kysely';
import type { Kysely } from 'kysely';

/**
 * `runs_status_idx` (status, every run, member runs too) had one reader left,
 * the count of PAUSED runs behind the `cairn_runs_paused` gauge (the list,
 * overview and reconciler read the top-level indexes of 0007_e and 0014_o);
 * yet each run's insert, claim and finish wrote an entry in it (about 200 B of
 * WAL per run, issue #29). It becomes a partial index of the PAUSED runs,
 * which a run's usual lifecycle never writes.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create index runs_paused_idx on runs (status) where status = 'PAUSED'`.execute(db);
  await sql`drop index runs_status_idx`.execute(db);
}

/** Puts the index of every status back. */
export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`create index runs_status_idx on runs (status)`.execute(db);
  await sql`drop index runs_paused_idx`.execute(db);
}
