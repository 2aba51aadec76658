import { Migrator, sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { migrate, MIGRATIONS } from './migrate.js';
import { PostgresCheckpointStore } from './postgres-checkpoint-store.js';
import { migrateOnly, useMigrationDatabase } from './test-support/migration-database.js';
import { newRun } from './test-support/store-test-context.js';

const MIGRATION = '0034_w_search_text_insert';

describe(`migration ${MIGRATION}`, () => {
  const database = useMigrationDatabase();

  it('finds runs created before and after by their input, and a deleted run’s text goes with it; down puts the foreign key back', async () => {
    const db = await database.open();
    await migrateOnly(db, (name) => name < MIGRATION);
    const before = await new PostgresCheckpointStore(db).createRun(
      // A named session: before 0036_h a run needs its session's row.
      newRun({ input: 'moraines of the old valley', sessionId: 'before' }),
    );

    await migrate(db);
    const store = new PostgresCheckpointStore(db);
    const after = await store.createRun(newRun({ input: 'moraines of the new valley' }));
    const other = await store.createRun(newRun({ input: 'glaciers elsewhere' }));
    const found = await store.listRuns({ search: 'MORAINES', limit: 10 });
    expect(found.runs.map((r) => r.run_id).sort()).toEqual([before.runId, after.runId].sort());

    await sql`delete from runs where run_id in (${before.runId}, ${other.runId})`.execute(db);
    const { rows } = await sql<{ run_id: string }>`
      select run_id from run_search_texts order by run_id`.execute(db);
    expect(rows).toEqual([{ run_id: after.runId }]);

    const { error } = await new Migrator({
      db,
      provider: { getMigrations: () => Promise.resolve(MIGRATIONS) },
      allowUnorderedMigrations: true,
    }).migrateTo('0033_w_paused_index');
    expect(error).toBeUndefined();
    const { rows: keys } = await sql<{ conname: string }>`
      select conname from pg_constraint where conname = 'run_search_texts_run_id_fkey'`.execute(db);
    expect(keys).toHaveLength(1);
    const again = await store.createRun(
      newRun({ input: 'moraines once more', sessionId: 'before' }),
    );
    // Read in SQL: the store's search reads the schema of the latest migration.
    const texts = async () =>
      (
        await sql<{ run_id: string }>`
          select run_id from run_search_texts where input_head ilike '%moraines%'`.execute(db)
      ).rows;
    expect(await texts()).toHaveLength(2);
    await sql`delete from runs where run_id = ${again.runId}`.execute(db);
    expect(await texts()).toHaveLength(1);
  });
});
