import { afterEach, beforeEach, expect, it } from 'vitest';
import { sql } from 'kysely';
import { testDatabase, type TestDatabase } from '@cairn/services';
import { openStoreDb } from './open-store-db.js';

let database: TestDatabase;

beforeEach(async () => {
  database = await testDatabase();
});

afterEach(async () => {
  await database.drop();
});

/** Runs a parameterized statement twice on a one-connection pool and lists that session's prepared statements. */
async function preparedAfterTwoReads(namedStatements?: boolean): Promise<string[]> {
  const db = await openStoreDb(database.url, {
    migrate: true,
    max: 1,
    ...(namedStatements === undefined ? {} : { namedStatements }),
  });
  try {
    for (let i = 0; i < 2; i++)
      await db.selectFrom('runs').select('run_id').where('run_id', '=', 'none').execute();
    const { rows } = await sql<{
      statement: string;
    }>`select statement from pg_prepared_statements where name like 'cairn\\_%'`.execute(db);
    return rows.map((r) => r.statement).filter((s) => s.includes('"runs"'));
  } finally {
    await db.destroy();
  }
}

it('names statements by default and sends them unnamed when CAIRN_PG_NAMED_STATEMENTS=0 is passed on', async () => {
  expect(await preparedAfterTwoReads()).toHaveLength(1);
  expect(await preparedAfterTwoReads(false)).toEqual([]);
});
