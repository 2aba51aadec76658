import type { TestDatabase } from '@cairn/services';
import { createDb, migrate, PostgresCheckpointStore } from '@cairn/store';
import { migratedTestDatabase } from '../../packages/store/src/test-support/migrated-test-database.js';

/** A migrated, isolated database with a store on it; `close()` drops it. */
export interface TestStore {
  database: TestDatabase;
  db: ReturnType<typeof createDb>;
  store: PostgresCheckpointStore;
  close(): Promise<void>;
}

/** Creates a fresh, migrated database on the test Postgres (a copy of the run's migrated template) and opens a store. */
export async function openTestStore(): Promise<TestStore> {
  const database = await migratedTestDatabase();
  const db = createDb(database.url);
  await migrate(db);
  return {
    database,
    db,
    store: new PostgresCheckpointStore(db),
    close: async () => {
      await db.destroy();
      await database.drop();
    },
  };
}
