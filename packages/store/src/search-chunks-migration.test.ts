import { Migrator, sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { RUN_STATUSES } from '@cairn/engine';
import { migrate, MIGRATIONS } from './migrate.js';
import { PostgresCheckpointStore } from './postgres-checkpoint-store.js';
import { migrateOnly, useMigrationDatabase } from './test-support/migration-database.js';
import { newRun } from './test-support/store-test-context.js';

const MIGRATION = '0037_h_search_chunks';

describe(`migration ${MIGRATION}`, () => {
  const database = useMigrationDatabase();

  it('finds the runs stored before it through one closed chunk, and down puts the one trigram index back', async () => {
    const db = await database.open();
    await migrateOnly(db, (name) => name < MIGRATION);
    const store = new PostgresCheckpointStore(db);
    // Before: a run in every status, a member run and a fork.
    const before: string[] = [];
    for (const status of RUN_STATUSES) {
      const run = await store.createRun(newRun({ input: `moraines, ${status}` }));
      await sql`update runs set status = ${status} where run_id = ${run.runId}`.execute(db);
      before.push(run.runId);
    }
    await store.createRun(
      newRun({ input: 'moraines, member', parentRunId: before[0]!, parentToolCallId: 'c1' }),
    );
    const fork = await store.createRun(
      newRun({ input: 'moraines, fork', sharedHistory: { runId: before[2]!, length: 0 } }),
    );
    before.push(fork.runId);

    await migrate(db);
    const { rows: chunks } = await sql<{ lo: number; hi: number }>`
      select lo::int, hi::int from run_search_chunks`.execute(db);
    expect(chunks).toEqual([{ lo: 1, hi: 8 }]);
    const after = await store.createRun(newRun({ input: 'moraines, after' }));
    const found = await store.listRuns({ search: 'moraines', limit: 50 });
    // Member runs are found through their team, as before: the search reads top-level runs.
    expect(found.runs.map((r) => r.run_id).sort()).toEqual([...before, after.runId].sort());

    const { error } = await new Migrator({
      db,
      provider: { getMigrations: () => Promise.resolve(MIGRATIONS) },
      allowUnorderedMigrations: true,
    }).migrateTo('0036_h_implicit_sessions');
    expect(error).toBeUndefined();
    const { rows: indexes } = await sql<{ indexname: string }>`
      select indexname from pg_indexes where tablename = 'run_search_texts' order by indexname`.execute(
      db,
    );
    expect(indexes.map((i) => i.indexname)).toEqual([
      'run_search_texts_pkey',
      'run_search_texts_trgm_idx',
    ]);
  });
});
