import { sql } from 'kysely';
import type { Kysely } from 'kysely';

/**
 * The run list's search without a trigram index insert per run (issue #29,
 * storage; packages/store/src/search-chunks.ts). `run_search_texts` numbers
 * its rows (`seq`, an identity: insert order); a BRIN index on `seq` (which an
 * insert into a range not yet summarized does not write) reads the open chunk;
 * `run_search_chunks` lists the closed chunks `[lo, hi)`, each with its
 * partial trigram index `run_search_texts_trgm_<lo>_<hi>`, built once by a
 * worker's periodic pass. The rows stored before are one closed chunk, and
 * the one GIN index of 0015_a, written at every run's insert, goes.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table run_search_texts add column seq bigint generated always as identity`.execute(
    db,
  );
  await sql`create index run_search_texts_seq_brin on run_search_texts
    using brin (seq) with (pages_per_range = 16)`.execute(db);
  await sql`create table run_search_chunks (
    lo bigint not null,
    hi bigint not null,
    primary key (lo, hi)
  )`.execute(db);
  const { rows } = await sql<{ last: string | null }>`
    select max(seq)::text as last from run_search_texts`.execute(db);
  if (rows[0]?.last != null) {
    const hi = Number(rows[0].last) + 1;
    await sql`create index ${sql.id(`run_search_texts_trgm_1_${hi}`)} on run_search_texts
      using gin (input_head gin_trgm_ops) where seq >= 1 and seq < ${sql.lit(hi)}`.execute(db);
    await sql`insert into run_search_chunks (lo, hi) values (1, ${hi})`.execute(db);
  }
  await sql`drop index run_search_texts_trgm_idx`.execute(db);
  await sql`analyze run_search_texts`.execute(db);
}

/** Puts back the one trigram index over every row. */
export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`create index run_search_texts_trgm_idx on run_search_texts
    using gin (input_head gin_trgm_ops)`.execute(db);
  const { rows } = await sql<{ lo: string; hi: string }>`
    select lo::text, hi::text from run_search_chunks`.execute(db);
  for (const { lo, hi } of rows)
    await sql`drop index if exists ${sql.id(`run_search_texts_trgm_${lo}_${hi}`)}`.execute(db);
  await sql`drop table run_search_chunks`.execute(db);
  await sql`drop index run_search_texts_seq_brin`.execute(db);
  await sql`alter table run_search_texts drop column seq`.execute(db);
}
