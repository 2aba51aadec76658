import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { closeSearchChunks } from './search-chunks.js';
import { newRun, useStoreTestContext } from './test-support/store-test-context.js';

const ctx = useStoreTestContext();

async function chunks(): Promise<string[]> {
  const { rows } = await sql<{ chunk: string }>`
    select lo || '-' || hi as chunk from run_search_chunks order by lo, hi`.execute(ctx.db);
  return rows.map((r) => r.chunk);
}

async function chunkIndexes(): Promise<string[]> {
  const { rows } = await sql<{ indexname: string }>`
    select indexname from pg_indexes
    where tablename = 'run_search_texts' and indexname like 'run_search_texts_trgm_%'
    order by indexname`.execute(ctx.db);
  return rows.map((r) => r.indexname);
}

async function found(search: string): Promise<string[]> {
  const page = await ctx.store.listRuns({ search, limit: 100 });
  return page.runs.map((r) => r.run_id).sort();
}

describe('the run list search in chunks', () => {
  it('finds a run by its input as soon as it is created, before and after its chunk closes and merges', async () => {
    const created: string[] = [];
    for (let i = 0; i < 18; i++)
      created.push((await ctx.store.createRun(newRun({ input: `moraines of valley ${i}` }))).runId);
    const other = await ctx.store.createRun(newRun({ input: 'glaciers elsewhere' }));
    // Open chunk only: read through the BRIN index on seq.
    expect(await found('MORAINES')).toEqual([...created].sort());

    // Chunks of 2 rows: 9 close (19 rows, the 19th stays open); 8 of them merge into one of 16.
    expect(await closeSearchChunks(ctx.db, 2)).toEqual({ locked: true, closed: 9, merged: 8 });
    expect(await chunks()).toEqual(['1-17', '17-19']);
    expect(await chunkIndexes()).toEqual([
      'run_search_texts_trgm_17_19',
      'run_search_texts_trgm_1_17',
    ]);
    expect(await found('MORAINES')).toEqual([...created].sort());
    expect(await found('valley 17')).toEqual([created[17]]);
    expect(await found('glaciers')).toEqual([other.runId]);

    // A run created after the pass is in the open chunk, found at once.
    const later = await ctx.store.createRun(newRun({ input: 'moraines once more' }));
    expect(await found('once more')).toEqual([later.runId]);
    // Its chunk (the 19th and 20th rows) is full: closed; then nothing until the next one is.
    expect(await closeSearchChunks(ctx.db, 2)).toEqual({ locked: true, closed: 1, merged: 0 });
    expect(await closeSearchChunks(ctx.db, 2)).toEqual({ locked: true, closed: 0, merged: 0 });
    expect(await found('MORAINES')).toEqual([...created, later.runId].sort());
    // A pass that stopped mid-merge left a part beside its merged chunk: the next pass drops it.
    await sql`insert into run_search_chunks (lo, hi) values (1, 3)`.execute(ctx.db);
    await sql`create index run_search_texts_trgm_1_3 on run_search_texts
      using gin (input_head gin_trgm_ops) where seq >= 1 and seq < 3`.execute(ctx.db);
    expect(await closeSearchChunks(ctx.db, 2)).toEqual({ locked: true, closed: 0, merged: 1 });
    expect(await chunks()).toEqual(['1-17', '17-19', '19-21']);
    expect(await chunkIndexes()).not.toContain('run_search_texts_trgm_1_3');
    await sql`delete from runs where run_id = ${created[0]!}`.execute(ctx.db);
    expect(await found('valley 0')).toEqual([]);
  });
});
