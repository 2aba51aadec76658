import { createHash } from 'node:crypto';
import { testDatabaseFromTemplate, type TestDatabase } from '@cairn/services';
import { createDb } from '../create-db.js';
import { migrate, MIGRATIONS } from '../migrate.js';

/** What the migrations are (names and code): a changed or added migration makes a template of its own. */
const MIGRATIONS_KEY = createHash('sha256')
  .update(
    Object.entries(MIGRATIONS)
      .map(([name, migration]) => `${name}\n${String(migration.up)}\n${String(migration.down)}`)
      .join('\n'),
  )
  .digest('hex')
  .slice(0, 16);

/**
 * A fresh database with every migration applied, copied from the test run's migrated template
 * (migrated once per run); drop it after the test. A store opened on it may call `migrate`
 * again: there is nothing left to apply.
 */
export function migratedTestDatabase(): Promise<TestDatabase> {
  return testDatabaseFromTemplate(`store_${MIGRATIONS_KEY}`, async (url) => {
    const db = createDb(url, { max: 1 });
    try {
      await migrate(db);
    } finally {
      await db.destroy();
    }
  });
}
