import { describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { batchDelta, newRun, useStoreTestContext } from './test-support/store-test-context.js';

const ctx = useStoreTestContext();

async function updatedAt(runId: string): Promise<Date> {
  return (await ctx.store.getRun(runId))!.updatedAt;
}

async function backdate(runId: string, seconds: number): Promise<Date> {
  await sql`update runs set updated_at = now() - make_interval(secs => ${seconds}) where run_id = ${runId}`.execute(
    ctx.db,
  );
  return updatedAt(runId);
}

describe('updated_at of a run that makes progress', () => {
  it('moves at a checkpoint when older than 5 s, stays for checkpoints within 5 s, and always moves at a finish', async () => {
    const { runId } = await ctx.store.createRun(newRun());
    const { epoch } = await ctx.store.claimRun(runId, { workerId: 'w1', reason: 'run' });

    const recent = await backdate(runId, 2);
    await ctx.store.commitCheckpoint(runId, epoch, batchDelta(1));
    expect(await updatedAt(runId)).toEqual(recent);

    const stale = await backdate(runId, 6);
    await ctx.store.commitCheckpoint(runId, epoch, batchDelta(2));
    const moved = await updatedAt(runId);
    expect(moved.getTime()).toBeGreaterThan(stale.getTime() + 5_000);
    // The reconciler's "RUNNING and not updated for 15 s" does not list a run that checkpoints.
    expect(
      (await ctx.store.listRunsByStatus(['RUNNING'], 15_000)).map((r) => r.runId),
    ).not.toContain(runId);

    const beforeFinish = await backdate(runId, 1);
    await ctx.store.finishRun(runId, epoch, {
      status: 'COMPLETED',
      content: 'done',
      error: null,
      delta: { messages: [], toolCalls: [], usage: batchDelta(3).usage },
    });
    expect((await updatedAt(runId)).getTime()).toBeGreaterThan(beforeFinish.getTime());
  });
});
