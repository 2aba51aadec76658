import { afterAll, beforeAll, describe } from 'vitest';
import { testDatabase, type TestDatabase } from '@cairn/services';
import { createDb, migrate, PostgresModelCapacity } from '@cairn/store';
import { describeModelCapacityConformance } from './model-capacity-conformance.js';

describe('PostgresModelCapacity', () => {
  // One migrated database for the file: every case works on a model name of its own.
  let database: TestDatabase | undefined;
  beforeAll(async () => {
    database = await testDatabase();
    const db = createDb(database.url, { max: 1 });
    try {
      await migrate(db);
    } finally {
      await db.destroy();
    }
  });
  afterAll(async () => {
    await database?.drop();
  });

  describeModelCapacityConformance('Postgres', (timings) => {
    const db = createDb(database!.url, { max: 4 });
    return Promise.resolve({
      capacity: new PostgresModelCapacity(db, timings),
      close: () => db.destroy(),
    });
  });
});
