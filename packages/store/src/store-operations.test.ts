import { describe, expect, it } from 'vitest';
import { testDatabase } from '@cairn/services';
import { createDb } from './create-db.js';
import { PostgresCheckpointStore } from './postgres-checkpoint-store.js';
import { useStoreTestContext } from './test-support/store-test-context.js';

const ctx = useStoreTestContext();

describe('PostgresCheckpointStore.ping', () => {
  it('answers on a migrated store', async () => {
    await expect(ctx.store.ping()).resolves.toBeUndefined();
  });

  it('rejects naming the runs table on a database the migrations never ran on', async () => {
    const bare = await testDatabase();
    const db = createDb(bare.url, { max: 1 });
    try {
      await expect(new PostgresCheckpointStore(db).ping()).rejects.toThrow(/"runs" does not exist/);
    } finally {
      await db.destroy();
      await bare.drop();
    }
  });

  it('rejects when Postgres is unreachable', async () => {
    const db = createDb('postgres://cairn@127.0.0.1:1/nowhere', { max: 1 });
    try {
      await expect(new PostgresCheckpointStore(db).ping()).rejects.toThrow(/ECONNREFUSED/);
    } finally {
      await db.destroy();
    }
  });
});

describe('PostgresCheckpointStore.browserSessions', () => {
  it('refuses a signed-out browser session on every store over the same database', async () => {
    const later = new Date(Date.now() + 60_000);
    await ctx.store.browserSessions.revoke('nonce-a', later);
    const other = new PostgresCheckpointStore(ctx.db);
    expect(await other.browserSessions.isRevoked('nonce-a')).toBe(true);
    expect(await other.browserSessions.isRevoked('nonce-b')).toBe(false);
    // signing out twice is no error
    await expect(ctx.store.browserSessions.revoke('nonce-a', later)).resolves.toBeUndefined();
  });

  it('forgets revocations whose cookies have expired at the next sign-out', async () => {
    await ctx.store.browserSessions.revoke('stale', new Date(Date.now() - 1_000));
    await ctx.store.browserSessions.revoke('fresh', new Date(Date.now() + 60_000));
    const left = await ctx.db.selectFrom('revoked_browser_sessions').select('nonce').execute();
    expect(left.map((row) => row.nonce)).toEqual(['fresh']);
  });
});
