import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { testDatabase } from '@cairn/services';
import type { TestDatabase } from '@cairn/services';
import { createDb } from './create-db.js';
import { StoreNotMigratedError } from './errors.js';
import { assertMigrated, migrate, MIGRATIONS } from './migrate.js';

const run = promisify(execFile);
const BIN = new URL('./bin/migrate.ts', import.meta.url).pathname;

async function tableNames(url: string): Promise<string[]> {
  const db = createDb(url, { max: 1 });
  try {
    const { rows } = await sql<{ name: string }>`
      select table_name as name from information_schema.tables where table_schema = 'public' order by 1`.execute(
      db,
    );
    return rows.map((r) => r.name);
  } finally {
    await db.destroy();
  }
}

describe('migrate', () => {
  let database: TestDatabase | undefined;
  afterEach(async () => {
    await database?.drop();
    database = undefined;
  });

  it('creates every table on an empty database and is idempotent', async () => {
    database = await testDatabase();
    const db = createDb(database.url, { max: 2 });
    try {
      const first = await migrate(db);
      expect(first.map((r) => [r.migrationName, r.status])).toEqual(
        Object.keys(MIGRATIONS).map((name) => [name, 'Success']),
      );
      expect(await migrate(db)).toEqual([]);
      await expect(Promise.all([migrate(db), migrate(db)])).resolves.toEqual([[], []]);
    } finally {
      await db.destroy();
    }
    expect(await tableNames(database.url)).toEqual([
      'cairn_capacity_grants',
      'cairn_capacity_models',
      'cairn_capacity_slots',
      'cairn_capacity_tenants',
      'cairn_capacity_waiters',
      'kysely_migration',
      'kysely_migration_lock',
      'pending_actions',
      'revoked_browser_sessions',
      'run_attempts',
      'run_commits',
      'run_continue_requests',
      'run_events',
      'run_idempotency_keys',
      'run_messages',
      'run_search_chunks',
      'run_search_texts',
      'runs',
      'schedule_firings',
      'schedules',
      'served_entities',
      'sessions',
      'tenant_day_spend',
      'tenant_model_day_spend',
      'tool_call_rows',
      'tool_calls',
      'webhook_attempts',
      'webhook_endpoints',
      'webhook_events',
    ]);
  });

  it('npm run migrate names DATABASE_URL when it is missing, and migrates when it is set', async () => {
    const env = { ...process.env };
    delete env.DATABASE_URL;
    const args = ['--import', 'tsx', '--conditions=source', BIN];
    const missing = run(process.execPath, args, { env });
    await expect(missing).rejects.toMatchObject({
      code: 1,
      stderr: expect.stringContaining('DATABASE_URL'),
    });

    database = await testDatabase();
    const ok = await run(process.execPath, args, { env: { ...env, DATABASE_URL: database.url } });
    expect(ok.stdout).toContain('applied: 0001_initial');
    expect(await tableNames(database.url)).toContain('runs');
  });

  it('assertMigrated names `npm run migrate` and each pending migration, and passes once migrated', async () => {
    database = await testDatabase();
    const db = createDb(database.url, { max: 2 });
    try {
      const empty = assertMigrated(db);
      await expect(empty).rejects.toBeInstanceOf(StoreNotMigratedError);
      await expect(empty).rejects.toThrow(
        `the store is not migrated (pending: ${Object.keys(MIGRATIONS).join(', ')}): run \`npm run migrate\``,
      );
      expect(await tableNames(database.url)).toEqual([]);

      await migrate(db);
      await expect(assertMigrated(db)).resolves.toBeUndefined();

      const last = Object.keys(MIGRATIONS).at(-1)!;
      await sql`delete from kysely_migration where name = ${last}`.execute(db);
      await expect(assertMigrated(db)).rejects.toMatchObject({
        pendingMigrations: [last],
        message: expect.stringContaining(`(pending: ${last}): run \`npm run migrate\``),
      });
    } finally {
      await db.destroy();
    }
  });
});
