import { sql, type Kysely, type RawBuilder, type SqlBool } from 'kysely';
import { ADVISORY_LOCKS, withAdvisoryLock } from './advisory-lock.js';
import type { Database } from './schema.js';

/**
 * The run list's text search without a trigram index insert per run (issue #29, storage, migration
 * 0037_h_search_chunks). `run_search_texts` numbers its rows (`seq`, in insert order); the trigram
 * index is a set of partial GIN indexes, each over a closed chunk of those numbers, built once by
 * {@link closeSearchChunks} (a worker's periodic pass); the rows past the last chunk (the open chunk)
 * are read through a BRIN index on `seq`, which an insert does not write to. A run is found by its
 * input as soon as it is created, as before; only the cost of finding it moves: a new run's text is
 * read by scan until its chunk closes.
 */

/** Rows of a chunk when it closes (the open chunk's rows a search scans, at most, between passes). */
const SEARCH_CHUNK_ROWS = 4_096;
/** Chunks of one size merged into one of eight times the size, so a search reads few indexes. */
const SEARCH_CHUNK_FAN_IN = 8;

/** A closed chunk: the rows whose `seq` is in `[lo, hi)`, indexed by its own partial index. */
interface SearchChunk {
  lo: number;
  hi: number;
}

/** The name of the partial trigram index of the chunk `[lo, hi)`. */
function chunkIndexName({ lo, hi }: SearchChunk): string {
  return `run_search_texts_trgm_${lo}_${hi}`;
}

/** Every recorded chunk, by `lo`, the widest first. */
async function readAllChunks(db: Kysely<Database>): Promise<SearchChunk[]> {
  // bigint columns: pg may give them as text.
  const { rows } = await sql<{ lo: string; hi: string }>`
    select lo, hi from run_search_chunks order by lo, hi desc`.execute(db);
  return rows.map((row) => ({ lo: Number(row.lo), hi: Number(row.hi) }));
}

/** Of `chunks` (by `lo`, the widest first), as few as cover them: a merged chunk stands for those it merged. */
function coverOf(chunks: readonly SearchChunk[]): SearchChunk[] {
  const cover: SearchChunk[] = [];
  for (const chunk of chunks) {
    const last = cover.at(-1);
    if (last === undefined || chunk.lo >= last.hi) cover.push(chunk);
  }
  return cover;
}

/** The closed chunks, as few as cover them. */
async function readChunks(db: Kysely<Database>): Promise<SearchChunk[]> {
  return coverOf(await readAllChunks(db));
}

/**
 * `run_id in (...)` of the top-level runs whose searched input (`run_search_texts.input_head`)
 * matches the ILIKE `pattern`: a branch per closed chunk, its bounds written as literals so that the
 * planner proves the chunk's partial index applies, and one over the open chunk.
 */
export async function searchTextMatch(
  db: Kysely<Database>,
  pattern: string,
): Promise<RawBuilder<SqlBool>> {
  const chunks = await readChunks(db);
  const branches = chunks.map(
    ({ lo, hi }) => sql`select run_id from run_search_texts
      where seq >= ${sql.lit(lo)} and seq < ${sql.lit(hi)} and input_head ilike ${pattern}`,
  );
  const open = chunks.at(-1)?.hi ?? 1;
  branches.push(sql`select run_id from run_search_texts
    where seq >= ${sql.lit(open)} and input_head ilike ${pattern}`);
  return sql<SqlBool>`run_id in (${sql.join(branches, sql` union all `)})`;
}

/** What one {@link closeSearchChunks} did: `locked: false` when another worker was at it. */
export interface SearchChunksResult {
  locked: boolean;
  /** Chunks closed (an index built over each). */
  closed: number;
  /** Chunks merged into bigger ones (their indexes dropped). */
  merged: number;
}

/**
 * Closes every full chunk of `run_search_texts` past the last closed one (`chunkRows` rows each,
 * by `seq`), building its partial trigram index, then merges each run of eight chunks of one size
 * into one; one worker at a time. Indexes are built and dropped `concurrently`: run creates never
 * wait for it. A chunk is recorded once its index is valid, and a merged chunk's parts are forgotten
 * before their indexes go, so a search never reads a chunk without its index.
 */
export async function closeSearchChunks(
  db: Kysely<Database>,
  chunkRows: number = SEARCH_CHUNK_ROWS,
): Promise<SearchChunksResult> {
  const outcome = await withAdvisoryLock(db, ADVISORY_LOCKS.searchChunks, async (connection) => {
    const result = { locked: true, closed: 0, merged: 0 };
    const { rows } = await sql<{ last: string | null }>`
      select pg_sequence_last_value(pg_get_serial_sequence('run_search_texts', 'seq')::regclass)::text as last`.execute(
      connection,
    );
    const last = Number(rows[0]?.last ?? 0);
    let open = (await readChunks(connection)).at(-1)?.hi ?? 1;
    // Every row numbered below the chunk's end was inserted by a transaction that the index build waits for.
    while (last + 1 - open >= chunkRows) {
      await buildChunk(connection, { lo: open, hi: open + chunkRows });
      open += chunkRows;
      result.closed++;
    }
    result.merged = await mergeChunks(connection);
    return result;
  });
  return outcome.locked ? outcome.result : { locked: false, closed: 0, merged: 0 };
}

/** Builds the chunk's index (again, if a failed build left it invalid) and records the chunk. */
async function buildChunk(db: Kysely<Database>, chunk: SearchChunk): Promise<void> {
  const name = sql.id(chunkIndexName(chunk));
  await sql`drop index concurrently if exists ${name}`.execute(db);
  await sql`create index concurrently ${name} on run_search_texts using gin (input_head gin_trgm_ops)
    where seq >= ${sql.lit(chunk.lo)} and seq < ${sql.lit(chunk.hi)}`.execute(db);
  await sql`insert into run_search_chunks (lo, hi) values (${chunk.lo}, ${chunk.hi})`.execute(db);
}

/** Merges runs of {@link SEARCH_CHUNK_FAN_IN} adjacent chunks of one size, smallest first; returns how many chunks went. */
async function mergeChunks(db: Kysely<Database>): Promise<number> {
  let merged = 0;
  for (;;) {
    // Also what an earlier pass that stopped mid-merge left: parts whose merged chunk is recorded.
    merged += await dropCoveredChunks(db);
    const run = firstRunToMerge(await readChunks(db));
    if (run === undefined) return merged;
    await buildChunk(db, { lo: run[0]!.lo, hi: run.at(-1)!.hi });
  }
}

/** Forgets the chunks a merged one covers, then drops their indexes; returns how many. */
async function dropCoveredChunks(db: Kysely<Database>): Promise<number> {
  const all = await readAllChunks(db);
  const cover = new Set(coverOf(all));
  const covered = all.filter((chunk) => !cover.has(chunk));
  for (const chunk of covered) {
    await sql`delete from run_search_chunks where lo = ${chunk.lo} and hi = ${chunk.hi}`.execute(
      db,
    );
    await sql`drop index concurrently if exists ${sql.id(chunkIndexName(chunk))}`.execute(db);
  }
  return covered.length;
}

/** The first {@link SEARCH_CHUNK_FAN_IN} adjacent chunks of one size, if any. */
function firstRunToMerge(chunks: readonly SearchChunk[]): SearchChunk[] | undefined {
  for (let start = 0; start + SEARCH_CHUNK_FAN_IN <= chunks.length; start++) {
    const run = chunks.slice(start, start + SEARCH_CHUNK_FAN_IN);
    const size = run[0]!.hi - run[0]!.lo;
    if (run.every((c, i) => c.hi - c.lo === size && (i === 0 || c.lo === run[i - 1]!.hi)))
      return run;
  }
  return undefined;
}
