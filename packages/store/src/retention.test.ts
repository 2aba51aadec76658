import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { ADVISORY_LOCKS } from './advisory-lock.js';
import { createDb } from './create-db.js';
import { pruneFinishedRuns } from './retention.js';
import {
  batchDelta,
  history,
  newRun,
  useStoreTestContext,
} from './test-support/store-test-context.js';

const ctx = useStoreTestContext();

const DAY = 86_400_000;
const LONG_AGO = new Date(Date.now() - 40 * DAY);

/** Inserts `count` top-level runs with `status`, last updated at `updatedAt`, 100 per session, each with one message. */
async function bulkRuns(
  prefix: string,
  count: number,
  status: string,
  updatedAt: Date,
): Promise<void> {
  await sql`
    insert into sessions (session_id)
    select ${prefix} || '-s' || g from generate_series(0, (${count}::int - 1) / 100) g`.execute(
    ctx.db,
  );
  await sql`
    insert into runs (run_id, session_id, entity_kind, entity_name, status, input, checkpoint, updated_at, created_at)
    select ${prefix} || '-' || g, ${prefix} || '-s' || (g / 100), 'agent', 'researcher', ${status}, 'x', 'tool-batch',
           ${updatedAt}, ${updatedAt}
    from generate_series(0, ${count}::int - 1) g`.execute(ctx.db);
  await sql`
    insert into run_commits (run_id, last_seq, end_idx, first_seq, first_idx, messages)
    select ${prefix} || '-' || g, 0, 1, 1, 0, '[{"role":"user","content":"x"}]' from generate_series(0, ${count}::int - 1) g`.execute(
    ctx.db,
  );
}

async function countRuns(where = sql`true`): Promise<number> {
  const { rows } = await sql<{
    n: number;
  }>`select count(*)::int as n from runs where ${where}`.execute(ctx.db);
  return rows[0]!.n;
}

describe('pruneFinishedRuns', () => {
  // 50 batches of 400 show what batching is for (checkpoints commit while the prune goes on) at a
  // fifth of the work of 100,000 runs, which took 30 s alone and needed a 240 s timeout on the one
  // Postgres a full test run shares; how long a prune takes is a figure for the bench, not a test.
  it('deletes 20,000 old finished runs in 50 batches while checkpoints keep committing; nothing unfinished or recent is touched', async () => {
    await bulkRuns('done', 20_000, 'COMPLETED', LONG_AGO);
    await bulkRuns('old-running', 50, 'RUNNING', LONG_AGO);
    await bulkRuns('old-pending', 50, 'PENDING', LONG_AGO);
    await bulkRuns('old-paused', 50, 'PAUSED', LONG_AGO);
    await bulkRuns('recent', 50, 'ERROR', new Date());
    await sql`analyze`.execute(ctx.db);
    const setUp = Date.now();

    // A run a worker is checkpointing the whole time.
    const live = await ctx.store.createRun(newRun({ messages: history(1) }));
    const { epoch } = await ctx.store.claimRun(live.runId, { workerId: 'w', reason: 'run' });
    let pruning = true;
    let commitsDuringPrune = 0;
    const checkpoints = (async () => {
      for (let batch = 1; pruning; batch++) {
        await ctx.store.commitCheckpoint(live.runId, epoch, batchDelta(batch));
        if (pruning) commitsDuringPrune++;
        await new Promise((resolve) => setTimeout(resolve, 20)); // a tool batch's worth of pause
      }
    })();

    const prunerDb = createDb(ctx.url, { max: 2 });
    try {
      const result = await pruneFinishedRuns(prunerDb, {
        olderThan: new Date(Date.now() - 30 * DAY),
        batchSize: 400,
      });
      pruning = false;
      await checkpoints;
      console.log(
        `pruned ${result.runs} runs in ${Date.now() - setUp} ms; ${commitsDuringPrune} checkpoints committed meanwhile`,
      );
      expect(result).toMatchObject({ locked: true, runs: 20_000, sessions: 200, batches: 50 });
    } finally {
      pruning = false;
      await prunerDb.destroy();
    }

    expect(commitsDuringPrune).toBeGreaterThan(0);
    const after = (await ctx.store.getRun(live.runId))!;
    expect(after.status).toBe('RUNNING');
    expect(after.lastCheckpointAtMessageIndex).toBeGreaterThanOrEqual(1 + commitsDuringPrune * 4);
    expect(await countRuns(sql`run_id like 'done-%'`)).toBe(0);
    const { rows } = await sql<{
      n: number;
    }>`select count(*)::int as n from run_messages where run_id like 'done-%'`.execute(ctx.db);
    expect(rows[0]!.n).toBe(0);
    for (const kept of ['old-running', 'old-pending', 'old-paused', 'recent']) {
      expect(await countRuns(sql`run_id like ${`${kept}-%`}`), kept).toBe(50);
    }
  });

  it('deletes a team with its member runs and everything they hold, and keeps a team whose member is unfinished', async () => {
    const team = await ctx.store.createRun(
      newRun({ entity: { kind: 'team', name: 'research-team' } }),
    );
    const member = await ctx.store.createRun(
      newRun({ sessionId: team.sessionId, parentRunId: team.runId, messages: history(3) }),
    );
    const busyTeam = await ctx.store.createRun(
      newRun({ entity: { kind: 'team', name: 'research-team' } }),
    );
    const busyMember = await ctx.store.createRun(
      newRun({ sessionId: busyTeam.sessionId, parentRunId: busyTeam.runId }),
    );
    for (const run of [team, member, busyTeam]) {
      const { epoch } = await ctx.store.claimRun(run.runId, { workerId: 'w', reason: 'run' });
      await ctx.store.commitCheckpoint(run.runId, epoch, batchDelta(1));
      await sql`update runs set status = 'COMPLETED', updated_at = ${LONG_AGO} where run_id = ${run.runId}`.execute(
        ctx.db,
      );
    }
    await ctx.store.appendEvents(team.runId, [{ type: 'RunCompleted', data: {} }]);

    const result = await pruneFinishedRuns(ctx.db, { olderThan: new Date(Date.now() - DAY) });
    expect(result).toMatchObject({ locked: true, runs: 2, sessions: 1 });
    expect(await ctx.store.getRun(team.runId)).toBeUndefined();
    expect(await ctx.store.getRun(member.runId)).toBeUndefined();
    for (const table of ['run_commits', 'tool_calls', 'run_attempts', 'run_events'] as const) {
      const { rows } = await sql<{
        n: number;
      }>`select count(*)::int as n from ${sql.table(table)} where run_id in (${team.runId}, ${member.runId})`.execute(
        ctx.db,
      );
      expect(rows[0]!.n, table).toBe(0);
    }
    expect(await ctx.store.getRun(busyTeam.runId)).toBeDefined();
    expect(await ctx.store.getRun(busyMember.runId)).toBeDefined();
  });

  it("deletes a tenant's session left empty, and keeps another tenant's session of the same id with its run", async () => {
    const acme = await ctx.store.createRun(newRun({ sessionId: 'shared', tenantId: 'acme' }));
    const globex = await ctx.store.createRun(newRun({ sessionId: 'shared', tenantId: 'globex' }));
    await sql`update runs set status = 'COMPLETED', updated_at = ${LONG_AGO} where run_id = ${acme.runId}`.execute(
      ctx.db,
    );
    await sql`update runs set status = 'COMPLETED' where run_id = ${globex.runId}`.execute(ctx.db);

    const result = await pruneFinishedRuns(ctx.db, { olderThan: new Date(Date.now() - DAY) });
    expect(result).toMatchObject({ locked: true, runs: 1, sessions: 1 });
    expect(
      await ctx.store.getSessionView({ tenantId: 'acme', sessionId: 'shared' }),
    ).toBeUndefined();
    expect(
      (await ctx.store.getSessionView({ tenantId: 'globex', sessionId: 'shared' }))?.runs.map(
        (r) => r.run_id,
      ),
    ).toEqual([globex.runId]);
  });

  it('does nothing while another worker holds the retention lock', async () => {
    await bulkRuns('done', 10, 'CANCELLED', LONG_AGO);
    const other = createDb(ctx.url, { max: 1 });
    try {
      await other.connection().execute(async (connection) => {
        await sql`select pg_advisory_lock(${ADVISORY_LOCKS.retention.toString()}::bigint)`.execute(
          connection,
        );
        const skipped = await pruneFinishedRuns(ctx.db, { olderThan: new Date() });
        expect(skipped).toEqual({ locked: false, runs: 0, sessions: 0, batches: 0 });
        await sql`select pg_advisory_unlock(${ADVISORY_LOCKS.retention.toString()}::bigint)`.execute(
          connection,
        );
      });
    } finally {
      await other.destroy();
    }
    expect(await countRuns()).toBe(10);
    expect((await pruneFinishedRuns(ctx.db, { olderThan: new Date() })).runs).toBe(10);
  });
});
