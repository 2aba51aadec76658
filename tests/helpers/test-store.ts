import { testDatabase, type TestDatabase } from '@cairn/services';
import { createDb, migrate, PostgresCheckpointStore } from '@cairn/store';

/** A migrated, isolated database with a store on it; `close()` drops it. */
export interface TestStore {
  database: TestDatabase;
  db: ReturnType<typeof createDb>;
  store: PostgresCheckpointStore;
  close(): Promise<void>;
}

/** Creates a fresh database on the test Postgres, migrates it and opens a store. */
export async function openTestStore(): Promise<TestStore> {
  const database = await testDatabase();
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
