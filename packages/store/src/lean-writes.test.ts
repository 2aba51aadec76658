import { describe, expect, it } from 'vitest';
import pg from 'pg';
import { Kysely, PostgresDialect, sql, type CompiledQuery } from 'kysely';
import { PostgresCheckpointStore } from './postgres-checkpoint-store.js';
import type { Database } from './schema.js';
import { newRun, useStoreTestContext } from './test-support/store-test-context.js';
import { withRunTree } from './run-tree.js';
import { v7 as uuidV7 } from 'uuid';

const ctx = useStoreTestContext();

/** The plan of `query`. */
async function planOf(query: CompiledQuery): Promise<string> {
  const { rows } = await ctx.db.executeQuery<{ 'QUERY PLAN': string }>({
    ...query,
    sql: `explain ${query.sql}`,
  });
  return rows.map((r) => r['QUERY PLAN']).join('\n');
}

/** A plan line that reads `runs_parent_run_id_idx` by `parent_run_id = key`. */
function parentLookup(key: string): RegExp {
  const escaped = key.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(
    `Index Scan (using|on) runs_parent_run_id_idx[^\\n]*\\n\\s+Index Cond: \\(parent_run_id = ${escaped}\\)`,
  );
}

describe('runs indexes a top-level run takes no entry in', () => {
  it('indexes parent_run_id for member runs only, and the readers of member runs still use it', async () => {
    const { rows } = await sql<{ indexdef: string }>`
      select indexdef from pg_indexes where indexname = 'runs_parent_run_id_idx'`.execute(ctx.db);
    expect(rows.map((r) => r.indexdef)).toEqual([
      expect.stringMatching(/\(parent_run_id, created_at\) WHERE \(parent_run_id IS NOT NULL\)$/),
    ]);

    const team = await ctx.store.createRun(newRun());
    await ctx.store.createRun(newRun({ parentRunId: team.runId, parentToolCallId: 'call_1' }));
    // A fleet's worth of teams and member runs, so that the plans are those of a big table.
    await sql`insert into runs (run_id, session_id, parent_run_id, entity_kind, entity_name, status, input, checkpoint)
      select 'run-' || i, ${team.sessionId}, case when i > 2000 then 'run-' || (i - 2000) / 2 + 1 end,
             'agent', 'researcher', 'COMPLETED', 'x', 'run'
        from generate_series(1, 6000) i`.execute(ctx.db);
    await sql`analyze runs`.execute(ctx.db);
    const members = ctx.db
      .selectFrom('runs')
      .selectAll()
      .where('parent_run_id', '=', team.runId)
      .orderBy('created_at')
      .orderBy('run_id')
      .compile();
    const tree = withRunTree(ctx.db, team.runId).selectFrom('tree').select('run_id').compile();
    // Each looks member runs up by their parent's id: the team's, and in the walk's recursive step each level's.
    expect(await planOf(members)).toMatch(parentLookup(`'${team.runId}'::text`));
    expect(await planOf(tree)).toMatch(parentLookup('tree_1.run_id'));
  });
});

describe('time-ordered ids', () => {
  const V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

  it('gives new top-level runs and their sessions UUIDv7 ids that sort in creation order', async () => {
    const created = [];
    for (let i = 0; i < 20; i++) created.push(await ctx.store.createRun(newRun()));
    for (const ids of [created.map((r) => r.runId), created.map((r) => r.sessionId)]) {
      for (const id of ids) expect(id).toMatch(V7);
      expect([...ids].sort()).toEqual(ids);
    }
    const { rows } = await sql<{ run_id: string }>`
      select run_id from runs order by run_id`.execute(ctx.db);
    expect(rows.map((r) => r.run_id)).toEqual(created.map((r) => r.runId));
  });

  it('keeps random ids for member runs, whose id prefix keys them in an event cursor', async () => {
    const team = await ctx.store.createRun(newRun());
    const members = [];
    for (const call of ['call_1', 'call_2', 'call_3'])
      members.push(
        await ctx.store.createRun(newRun({ parentRunId: team.runId, parentToolCallId: call })),
      );
    for (const member of members) expect(member.runId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4/);
    expect(new Set(members.map((m) => m.runId.slice(0, 8))).size).toBe(3);
  });

  it('orders the ids made in one millisecond by their counter', () => {
    const ids = Array.from({ length: 10_000 }, () => uuidV7());
    for (const id of ids) expect(id).toMatch(V7);
    expect(new Set(ids).size).toBe(ids.length);
    expect([...ids].sort()).toEqual(ids);
  });
});

describe('create in one statement', () => {
  /** A store on its own pool that records every statement sent to Postgres. */
  function tracedStore() {
    const sent: string[] = [];
    const pool = new pg.Pool({ connectionString: ctx.url, max: 2 });
    pool.on('connect', (client) => {
      const query = client.query.bind(client) as (...args: unknown[]) => unknown;
      (client as unknown as { query: typeof query }).query = (...args) => {
        const first = args[0];
        sent.push(typeof first === 'string' ? first : String((first as { text?: string }).text));
        return query(...args);
      };
    });
    const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
    return { store: new PostgresCheckpointStore(db), sent, db };
  }

  it('opens the session and inserts the run in one round trip, and a fork with its messages', async () => {
    const { store, sent, db } = tracedStore();
    try {
      const run = await store.createRun(newRun({ userId: 'u1' }));
      expect(sent).toHaveLength(1);
      // A run that names no session opens its own and writes no session row.
      expect(sent[0]).toMatch(/^with "joined_session" as \(select\), "new_commit"/);
      expect(await ctx.store.getSessionView({ tenantId: null, sessionId: run.sessionId })).toEqual(
        expect.objectContaining({ session_id: run.sessionId, user_id: 'u1' }),
      );
      expect(await ctx.store.getRun(run.runId)).toEqual({ ...run, replayed: undefined });

      sent.length = 0;
      const again = await store.createRun(newRun({ sessionId: run.sessionId }));
      expect(sent).toHaveLength(1);
      expect(sent[0]).toMatch(/^with "joined_session" as \(insert into sessions/);
      const session = await ctx.db
        .selectFrom('sessions')
        .select(['created_at', 'updated_at'])
        .where('session_id', '=', run.sessionId)
        .executeTakeFirstOrThrow();
      expect(session.updated_at.getTime()).toBeGreaterThanOrEqual(again.createdAt.getTime());

      sent.length = 0;
      const fork = await store.createRun(
        newRun({
          sessionId: run.sessionId,
          sharedHistory: { runId: run.runId, length: 0 },
          messages: [
            { role: 'user', content: 'first' },
            { role: 'user', content: 'second' },
          ],
        }),
      );
      expect(sent).toHaveLength(1);
      expect(fork.lastCheckpointAtMessageIndex).toBe(2);
      expect((await ctx.store.loadHistory(fork.runId)).messages).toEqual([
        { role: 'user', content: 'first' },
        { role: 'user', content: 'second' },
      ]);
    } finally {
      await db.destroy();
    }
  });
});
