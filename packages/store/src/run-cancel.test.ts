import { describe, expect, it } from 'vitest';
import { LeaseLostError, RunNotFoundError } from '@cairn/engine';
import { RunAlreadyTerminalError } from './errors.js';
import { batchDelta, newRun, useStoreTestContext } from './test-support/store-test-context.js';

const ctx = useStoreTestContext();

describe('cancellation', () => {
  it('requestCancel marks a live run and refuses terminal or unknown runs', async () => {
    const { runId } = await ctx.store.createRun(newRun());
    const { epoch } = await ctx.store.claimRun(runId, { workerId: 'w1', reason: 'run' });
    const marked = await ctx.store.requestCancel(runId);
    expect(marked.cancelRequestedAt).toBeInstanceOf(Date);
    expect(marked).toMatchObject({ status: 'RUNNING', epoch });
    expect((await ctx.store.requestCancel(runId)).cancelRequestedAt).toEqual(
      marked.cancelRequestedAt,
    );
    // The worker holding it still finishes it as CANCELLED.
    await ctx.store.finishRun(runId, epoch, {
      status: 'CANCELLED',
      content: 'partial',
      error: null,
      delta: batchDelta(1),
    });
    await expect(ctx.store.requestCancel(runId)).rejects.toMatchObject({
      name: 'RunAlreadyTerminalError',
      runId,
      status: 'CANCELLED',
    });
    await expect(ctx.store.requestCancel(runId)).rejects.toBeInstanceOf(RunAlreadyTerminalError);
    await expect(ctx.store.requestCancel('missing')).rejects.toBeInstanceOf(RunNotFoundError);
  });

  it('forceCancel fences out the old epoch, closes its attempt and cascades to live member runs', async () => {
    const parent = await ctx.store.createRun(
      newRun({ entity: { kind: 'team', name: 'research-team' } }),
    );
    const { epoch } = await ctx.store.claimRun(parent.runId, { workerId: 'zombie', reason: 'run' });
    const child = await ctx.store.createRun(
      newRun({ sessionId: parent.sessionId, parentRunId: parent.runId }),
    );
    const childClaim = await ctx.store.claimRun(child.runId, { workerId: 'zombie', reason: 'run' });
    const grandchild = await ctx.store.createRun(
      newRun({ sessionId: parent.sessionId, parentRunId: child.runId }),
    );
    const done = await ctx.store.createRun(
      newRun({ sessionId: parent.sessionId, parentRunId: parent.runId }),
    );
    const doneClaim = await ctx.store.claimRun(done.runId, { workerId: 'w', reason: 'run' });
    await ctx.store.finishRun(done.runId, doneClaim.epoch, {
      status: 'COMPLETED',
      content: 'ok',
      error: null,
      delta: batchDelta(1),
    });

    expect(await ctx.store.forceCancel(parent.runId, { onlyIfEpoch: epoch + 1 })).toBeUndefined();
    const cancelled = await ctx.store.forceCancel(parent.runId, { onlyIfEpoch: epoch });
    expect(cancelled).toMatchObject({ status: 'CANCELLED', epoch: epoch + 1 });
    expect(cancelled?.cancelRequestedAt).toBeInstanceOf(Date);

    await expect(
      ctx.store.commitCheckpoint(parent.runId, epoch, batchDelta(1)),
    ).rejects.toBeInstanceOf(LeaseLostError);
    await expect(
      ctx.store.commitCheckpoint(child.runId, childClaim.epoch, batchDelta(1)),
    ).rejects.toBeInstanceOf(LeaseLostError);
    expect((await ctx.store.getRun(child.runId))?.status).toBe('CANCELLED');
    expect((await ctx.store.getRun(grandchild.runId))?.status).toBe('CANCELLED');
    expect((await ctx.store.getRun(done.runId))?.status).toBe('COMPLETED');
    const attempts = await ctx.db
      .selectFrom('run_attempts')
      .select(['run_id', 'outcome'])
      .where('worker_id', '=', 'zombie')
      .execute();
    expect(attempts.map((a) => a.outcome)).toEqual(['cancelled', 'cancelled']);
    expect(await ctx.store.forceCancel(parent.runId)).toBeUndefined();
    await expect(ctx.store.forceCancel('missing')).rejects.toBeInstanceOf(RunNotFoundError);
  });

  it('forceCancel cancels a queued run that never ran', async () => {
    const { runId } = await ctx.store.createRun(newRun());
    expect(await ctx.store.forceCancel(runId, { statuses: ['PENDING'] })).toMatchObject({
      status: 'CANCELLED',
      epoch: 1,
    });
    await expect(ctx.store.claimRun(runId, { workerId: 'w', reason: 'run' })).rejects.toMatchObject(
      { status: 'CANCELLED' },
    );
  });

  it('forceCancel closes the tool rows its dead worker left running, in the run and its member runs', async () => {
    const parent = await ctx.store.createRun(
      newRun({ entity: { kind: 'team', name: 'research-team' } }),
    );
    const { epoch } = await ctx.store.claimRun(parent.runId, { workerId: 'dead', reason: 'run' });
    const running = (toolCallId: string) => ({
      toolCallId,
      name: 'slow_search',
      args: {},
      result: null,
      status: 'running' as const,
      batch: 1,
      idempotencyKey: `k-${toolCallId}`,
      childRunId: null,
      startedAt: new Date(),
      endedAt: null,
    });
    await ctx.store.commitCheckpoint(parent.runId, epoch, {
      ...batchDelta(1),
      toolCalls: [running('t-1')],
    });
    const child = await ctx.store.createRun(
      newRun({ sessionId: parent.sessionId, parentRunId: parent.runId }),
    );
    const childClaim = await ctx.store.claimRun(child.runId, { workerId: 'dead', reason: 'run' });
    await ctx.store.commitCheckpoint(child.runId, childClaim.epoch, {
      ...batchDelta(1),
      toolCalls: [running('t-2')],
    });

    await ctx.store.forceCancel(parent.runId);
    for (const runId of [parent.runId, child.runId]) {
      const view = (await ctx.store.getRunView(runId))!;
      expect(view.status).toBe('CANCELLED');
      expect(view.tools.map((t) => [t.status, t.result, t.ended_at !== null])).toEqual([
        ['error', 'interrupted: the run ended CANCELLED before this call finished', true],
      ]);
    }
  });
});
