import { createDatabase, type TestDatabase } from './create-database.js';
import { MissingServiceUrlError } from './errors.js';
import { TEST_DATABASE_URL_VAR } from './test-env.js';

/** Creates a fresh database on the test run's Postgres (`CAIRN_TEST_DATABASE_URL`); drop it in `afterEach`/`afterAll`. */
export function testDatabase(): Promise<TestDatabase> {
  const adminUrl = process.env[TEST_DATABASE_URL_VAR];
  if (!adminUrl) return Promise.reject(new MissingServiceUrlError(TEST_DATABASE_URL_VAR));
  return createDatabase(adminUrl);
}
