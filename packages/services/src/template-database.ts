import pg from 'pg';
import { createDatabase, quoteIdentifier, waitForConnectionsToClose } from './create-database.js';
import type { TestDatabase } from './create-database.js';
import { testDatabase } from './test-database.js';
import { TEST_DATABASE_URL_VAR, TEST_RUN_ID_VAR } from './test-env.js';

/** What a template key may hold: it goes into a database name. */
const KEY_PATTERN = /^[a-z0-9_]{1,32}$/;

/** The templates this process has made sure of, by name. */
const ensured = new Map<string, Promise<void>>();

/** The name prefix of the test run's template databases. */
function templatePrefix(runId: string): string {
  return `tpl_${runId}_`;
}

/**
 * Creates a fresh database on the test run's Postgres as a copy of a template that `prepare`
 * fills once per test run (whichever test process asks first; the others wait for it on an
 * advisory lock). A copy takes a fraction of a preparation: a migrated store is copied in about
 * 0.2 s, where migrating a new database takes about 1 s. `key` names what `prepare` makes (a hash
 * of it, so that a changed preparation gets a template of its own). Outside a test run that names
 * itself (`CAIRN_TEST_RUN_ID`, set by the vitest global setup) there is no template: the database
 * is created and prepared in place.
 */
export async function testDatabaseFromTemplate(
  key: string,
  prepare: (url: string) => Promise<void>,
): Promise<TestDatabase> {
  if (!KEY_PATTERN.test(key))
    throw new Error(`template key: must be 1 to 32 of a-z, 0-9 and _, got ${JSON.stringify(key)}`);
  const adminUrl = process.env[TEST_DATABASE_URL_VAR];
  const runId = process.env[TEST_RUN_ID_VAR];
  if (!adminUrl || !runId) {
    const database = await testDatabase();
    await prepare(database.url);
    return database;
  }
  const template = `${templatePrefix(runId)}${key}`;
  let ready = ensured.get(template);
  if (!ready) {
    ready = ensureTemplate(adminUrl, template, prepare);
    ensured.set(template, ready);
    ready.catch(() => ensured.delete(template));
  }
  await ready;
  return createDatabase(adminUrl, undefined, { template });
}

/** Creates and prepares `template` unless it exists, holding an advisory lock on its name meanwhile. */
async function ensureTemplate(
  adminUrl: string,
  template: string,
  prepare: (url: string) => Promise<void>,
): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    await client.query('SELECT pg_advisory_lock(hashtext($1))', [template]);
    const existing = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [template]);
    if (existing.rowCount) return;
    // Prepared under another name and renamed once complete: a template is whole or absent.
    const building = `${template}_building`;
    await client.query(`DROP DATABASE IF EXISTS ${quoteIdentifier(building)} WITH (FORCE)`);
    const database = await createDatabase(adminUrl, building);
    await prepare(database.url);
    await waitForConnectionsToClose(client, building);
    await client.query(
      `ALTER DATABASE ${quoteIdentifier(building)} RENAME TO ${quoteIdentifier(template)}`,
    );
  } finally {
    // Ending the session releases its advisory lock.
    await client.end();
  }
}

/** Drops the template databases of test run `runId` (the vitest global teardown). */
export async function dropRunTemplates(adminUrl: string, runId: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ datname: string }>(
      'SELECT datname FROM pg_database WHERE starts_with(datname, $1)',
      [templatePrefix(runId)],
    );
    for (const { datname } of rows)
      await client.query(`DROP DATABASE IF EXISTS ${quoteIdentifier(datname)} WITH (FORCE)`);
  } finally {
    await client.end();
  }
}
