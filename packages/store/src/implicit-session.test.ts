import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { SessionHasLiveRunsError } from './errors.js';
import { pruneFinishedRuns } from './retention.js';
import type { SessionKey } from './session-key.js';
import { newRun, useStoreTestContext } from './test-support/store-test-context.js';

const ctx = useStoreTestContext();

async function sessionRows(key: SessionKey): Promise<number> {
  const { rows } = await sql<{ n: number }>`
    select count(*)::int as n from sessions
    where tenant_key = ${key.tenantId ?? ''} and session_id = ${key.sessionId}`.execute(ctx.db);
  return rows[0]!.n;
}

/** The session view without its ids: what two sessions opened the same way answer alike. */
async function viewOf(key: SessionKey) {
  const view = await ctx.store.getSessionView(key);
  return view && { ...view, session_id: undefined, runs: view.runs.length };
}

describe('a session no run named (implicit)', () => {
  it('writes no row and reads as a session opened by its first run', async () => {
    const run = await ctx.store.createRun(newRun({ userId: 'u1', tenantId: 'acme' }));
    const key = { tenantId: 'acme', sessionId: run.sessionId };
    expect(await sessionRows(key)).toBe(0);
    expect(await ctx.store.getSessionView(key)).toEqual({
      session_id: run.sessionId,
      user_id: 'u1',
      created_at: run.createdAt.toISOString(),
      updated_at: run.createdAt.toISOString(),
      runs: [expect.objectContaining({ run_id: run.runId })],
    });
    // Sessions are per tenant, named or not.
    expect(
      await ctx.store.getSessionView({ tenantId: 'globex', sessionId: run.sessionId }),
    ).toBeUndefined();
    expect(
      await ctx.store.getSessionView({ tenantId: null, sessionId: run.sessionId }),
    ).toBeUndefined();
  });

  it('answers as a named session does after a later run, a member run and a fork join it', async () => {
    const named = { tenantId: null, sessionId: 'named' };
    const first = await ctx.store.createRun(newRun({ userId: 'u1', sessionId: 'named' }));
    const implicitRun = await ctx.store.createRun(newRun({ userId: 'u1' }));
    const implicit = { tenantId: null, sessionId: implicitRun.sessionId };
    for (const [key, top] of [
      [named, first],
      [implicit, implicitRun],
    ] as const) {
      // A member run joins its team's session: a named one is marked updated, an implicit one gets no row.
      await ctx.store.createRun(
        newRun({ sessionId: key.sessionId, parentRunId: top.runId, parentToolCallId: 'c1' }),
      );
      expect(await sessionRows(key)).toBe(key === named ? 1 : 0);
      await ctx.store.createRun(
        newRun({ sessionId: key.sessionId, sharedHistory: { runId: top.runId, length: 0 } }),
      );
      // A later run by another user: the session keeps its first run's user and creation time.
      await ctx.store.createRun(newRun({ userId: 'u2', sessionId: key.sessionId }));
    }
    expect(await sessionRows(implicit)).toBe(1);
    const [namedView, implicitView] = [await viewOf(named), await viewOf(implicit)];
    expect(namedView).toMatchObject({ user_id: 'u1', runs: 3 });
    expect(implicitView).toMatchObject({
      user_id: 'u1',
      runs: 3,
      created_at: implicitRun.createdAt.toISOString(),
    });
    const { rows } = await sql<{ created: Date; updated: Date }>`
      select min(created_at) as created, max(created_at) as updated from runs
      where tenant_key = '' and session_id = ${implicit.sessionId}`.execute(ctx.db);
    expect(implicitView?.updated_at).toBe(rows[0]!.updated.toISOString());
  });

  it('deletes as a named session does, and waits for no row', async () => {
    const run = await ctx.store.createRun(newRun());
    const key = { tenantId: null, sessionId: run.sessionId };
    await expect(ctx.store.deleteSession(key)).rejects.toBeInstanceOf(SessionHasLiveRunsError);
    // The refused delete leaves neither a row nor a change behind.
    expect(await sessionRows(key)).toBe(0);
    expect(await ctx.store.getRun(run.runId)).toBeDefined();

    await sql`update runs set status = 'COMPLETED' where run_id = ${run.runId}`.execute(ctx.db);
    expect(await ctx.store.deleteSession(key)).toBe(true);
    expect(await ctx.store.getRun(run.runId)).toBeUndefined();
    expect(await sessionRows(key)).toBe(0);
    expect(await ctx.store.deleteSession(key)).toBe(false);
    expect(await ctx.store.getSessionView(key)).toBeUndefined();
  });

  it('counts as a session retention emptied', async () => {
    const run = await ctx.store.createRun(newRun());
    await sql`update runs set status = 'COMPLETED', updated_at = now() - interval '40 days'
      where run_id = ${run.runId}`.execute(ctx.db);
    const result = await pruneFinishedRuns(ctx.db, {
      olderThan: new Date(Date.now() - 86_400_000),
    });
    expect(result).toMatchObject({ locked: true, runs: 1, sessions: 1 });
    expect(
      await ctx.store.getSessionView({ tenantId: null, sessionId: run.sessionId }),
    ).toBeUndefined();
  });
});
