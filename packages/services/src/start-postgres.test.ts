import { connect } from 'node:net';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { createDatabase } from './create-database.js';
import { startPostgres, type PostgresService } from './start-postgres.js';
import { testDatabase } from './test-database.js';
import { TEST_DATABASE_URL_VAR } from './test-env.js';

async function query(url: string, sql: string): Promise<Record<string, unknown>[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(sql)).rows;
  } finally {
    await client.end();
  }
}

function refusesConnections(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code === 'ECONNREFUSED'));
  });
}

describe.each(['machine', 'embedded'] as const)('startPostgres (%s binaries)', (use) => {
  let postgres: PostgresService | undefined;
  afterAll(() => postgres?.stop());

  it('serves queries on the returned URL with fsync on and room for 300 connections, then stops for good', async () => {
    postgres = await startPostgres({ ignoreEnv: true, use });
    expect(postgres.source).toBe(use);
    expect(postgres.url).toMatch(/^postgres:\/\/postgres@127\.0\.0\.1:\d+\/postgres$/);
    const [row] = await query(
      postgres.url,
      "SELECT 1 + 1 AS two, current_setting('fsync') AS fsync, current_setting('max_connections') AS max",
    );
    expect(row).toEqual({ two: 2, fsync: 'on', max: '300' });

    await postgres.stop();
    expect(await refusesConnections(Number(new URL(postgres.url).port))).toBe(true);
  });
});

describe('createDatabase', () => {
  it('gives an isolated database that drop removes, even with a connection still open', async () => {
    const first = await testDatabase();
    const second = await createDatabase(
      process.env[TEST_DATABASE_URL_VAR] ?? '',
      `${first.name}_b`,
    );
    try {
      await query(first.url, 'CREATE TABLE only_here (id int)');
      expect(
        await query(first.url, "SELECT to_regclass('only_here') IS NOT NULL AS found"),
      ).toEqual([{ found: true }]);
      expect(
        await query(second.url, "SELECT to_regclass('only_here') IS NOT NULL AS found"),
      ).toEqual([{ found: false }]);

      const lingering = new pg.Client({ connectionString: first.url });
      lingering.on('error', () => undefined);
      await lingering.connect();
      await first.drop();
      await lingering.end().catch(() => undefined);
      await expect(query(first.url, 'SELECT 1')).rejects.toThrow(/does not exist/);
    } finally {
      await first.drop();
      await second.drop();
    }
  });
});

describe('startPostgres with DATABASE_URL', () => {
  it('returns the given URL without starting anything', async () => {
    const saved = process.env.DATABASE_URL;
    process.env.DATABASE_URL = 'postgres://someone@db.example:5432/app';
    try {
      const postgres = await startPostgres();
      expect(postgres).toMatchObject({
        url: 'postgres://someone@db.example:5432/app',
        source: 'env',
      });
      await postgres.stop();
    } finally {
      if (saved === undefined) delete process.env.DATABASE_URL;
      else process.env.DATABASE_URL = saved;
    }
  });
});
