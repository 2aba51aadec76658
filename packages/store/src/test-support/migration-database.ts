import { Migrator, type Kysely } from 'kysely';
import { afterEach, expect } from 'vitest';
import { testDatabase } from '@cairn/services';
import type { TestDatabase } from '@cairn/services';
import { createDb } from '../create-db.js';
import { MIGRATIONS } from '../migrate.js';
import type { Database } from '../schema.js';

/**
 * For a migration's tests: `open()` gives a fresh, empty database (two connections), which the
 * test migrates itself; it is closed and dropped after each test.
 */
export function useMigrationDatabase(): { open: () => Promise<Kysely<Database>> } {
  let database: TestDatabase | undefined;
  let db: Kysely<Database> | undefined;
  afterEach(async () => {
    await db?.destroy();
    await database?.drop();
    db = undefined;
    database = undefined;
  });
  return {
    open: async () => {
      database = await testDatabase();
      db = createDb(database.url, { max: 2 });
      return db;
    },
  };
}

/** Applies the migrations whose names `keep` accepts, as a store of that time would have them. */
export async function migrateOnly(
  db: Kysely<Database>,
  keep: (name: string) => boolean,
): Promise<void> {
  const chosen = Object.fromEntries(Object.entries(MIGRATIONS).filter(([name]) => keep(name)));
  const { error } = await new Migrator({
    db,
    provider: { getMigrations: () => Promise.resolve(chosen) },
    allowUnorderedMigrations: true,
  }).migrateToLatest();
  expect(error).toBeUndefined();
}
