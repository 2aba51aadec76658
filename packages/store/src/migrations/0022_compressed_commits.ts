import { sql } from 'kysely';
import type { Kysely } from 'kysely';

/**
 * `run_commits` rows compressed (issue #29). Postgres compresses a row's values only once the row
 * passes about 2 KB (`TOAST_TUPLE_THRESHOLD`, fixed at build time), and most writes of a run are
 * smaller, so their JSON went to the WAL whole. Now:
 * - `pad`: spaces the writer adds to a row of at least 384 bytes of values, up to 2,048 in all, to
 *   lift it past the threshold (`run-commits.ts`, `padOf`); null for a smaller or bigger row;
 * - `toast_tuple_target = 128` with every value column `storage main`: once a row passes the
 *   threshold, Postgres compresses each of its values (not only the biggest until the row fits in
 *   2 KB), and keeps them in the row (`main`) rather than moving them to the TOAST table, up to
 *   about 8 KB a row; past that a value moves out as before.
 * Rows stored before keep their form; every reader reads both (Postgres decompresses on read).
 */
const VALUE_COLUMNS = ['run_id', 'messages', 'events', 'calls', 'pad'] as const;

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table run_commits add column pad text`.execute(db);
  for (const column of VALUE_COLUMNS)
    await sql`alter table run_commits alter column ${sql.ref(column)} set storage main`.execute(db);
  await sql`alter table run_commits set (toast_tuple_target = 128)`.execute(db);
}

/** Stores rows as before: no padding, values compressed only past the threshold. */
export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table run_commits reset (toast_tuple_target)`.execute(db);
  for (const column of VALUE_COLUMNS.filter((c) => c !== 'pad'))
    await sql`alter table run_commits alter column ${sql.ref(column)} set storage extended`.execute(
      db,
    );
  await sql`alter table run_commits drop column pad`.execute(db);
}
