import { describe, expect, it } from 'vitest';
import { LeaseLostError } from '@cairn/engine';
import { recoveryIntents } from '@cairn/engine/lifecycle';
import { batchDelta, newRun, useStoreTestContext } from './test-support/store-test-context.js';

const ctx = useStoreTestContext();

const TEAM = { kind: 'team', name: 'research-team' } as const;
const MEMBER = { kind: 'agent', name: 'research-team/researcher' } as const;
const LIVE = ['PENDING', 'RUNNING'] as const;

/**
 * A deadline already past by Postgres's clock (the sweep reads `now()`), passed in to the create
 * statement rather than waited for; `ms` ago by this process's clock, which shares the machine's.
 */
const passedMsAgo = (ms: number) => new Date(Date.now() - ms);

/** A team run claimed by `w1` with a member run claimed under it, both RUNNING; the member has a tool call running. */
async function runningTree(deadline: { deadlineMs: number } | { deadlineAt: Date }) {
  const team = await ctx.store.createRun(newRun({ entity: TEAM, ...deadline }));
  const { epoch } = await ctx.store.claimRun(team.runId, { workerId: 'w1', reason: 'run' });
  const member = await ctx.store.createRun(
    newRun({
      entity: MEMBER,
      parentRunId: team.runId,
      parentToolCallId: 'call_delegate',
      parentEpoch: epoch,
      deadlineAt: team.deadlineAt,
    }),
  );
  const memberClaim = await ctx.store.claimRun(member.runId, {
    workerId: 'w1',
    reason: 'run',
    parentEpoch: epoch,
  });
  const running = batchDelta(1).toolCalls[0]!;
  await ctx.store.commitCheckpoint(member.runId, memberClaim.epoch, {
    messages: [],
    toolCalls: [{ ...running, status: 'running', result: null, endedAt: null }],
    usage: memberClaim.run.usage,
  });
  return { team, teamEpoch: epoch, member, memberEpoch: memberClaim.epoch };
}

describe('deadlines in the store', () => {
  it("counts a run's deadline from its creation, and a member run's is its team's at every claim, also once a continue moved it", async () => {
    const { team, teamEpoch, member } = await runningTree({ deadlineMs: 60_000 });
    expect(team.deadlineAt!.getTime() - team.createdAt.getTime()).toBe(60_000);
    expect((await ctx.store.getRun(member.runId))!.deadlineAt).toEqual(team.deadlineAt);
    expect((await ctx.store.getRunView(team.runId))!.deadline_at).toBe(
      team.deadlineAt!.toISOString(),
    );

    await ctx.store.finishRun(team.runId, teamEpoch, {
      status: 'ERROR',
      content: null,
      error: { name: 'DeadlineExceededError', message: 'passed' },
      delta: { messages: [], toolCalls: [], usage: team.usage },
    });
    const continued = await ctx.store.recordContinueRequest(team.runId, {
      input: null,
      statuses: ['RUNNING', 'ERROR'],
      deadlineMs: 120_000,
    });
    expect(continued.recorded).toBe(true);
    const moved = (await ctx.store.getRun(team.runId))!.deadlineAt!;
    // Counted from the continue (stored in the same statement).
    if (continued.recorded)
      expect(moved.getTime() - continued.request.requestedAt.getTime()).toBe(120_000);

    const reclaimed = await ctx.store.claimRun(team.runId, { workerId: 'w2', reason: 'continue' });
    const memberAgain = await ctx.store.claimRun(member.runId, {
      workerId: 'w2',
      reason: 'continue',
      parentEpoch: reclaimed.epoch,
    });
    expect(memberAgain.run.deadlineAt).toEqual(moved);
  });

  it("merges a continue's new deadline into the continue that waits, keeping its input", async () => {
    const run = await ctx.store.createRun(newRun({ deadlineMs: 10 }));
    const { epoch } = await ctx.store.claimRun(run.runId, { workerId: 'w1', reason: 'run' });
    await ctx.store.finishRun(run.runId, epoch, {
      status: 'ERROR',
      content: null,
      error: { name: 'DeadlineExceededError', message: 'passed' },
      delta: { messages: [], toolCalls: [], usage: run.usage },
    });
    const statuses = ['RUNNING', 'ERROR'] as const;
    const first = await ctx.store.recordContinueRequest(run.runId, {
      input: 'also this',
      statuses,
    });
    expect(first.recorded).toBe(true);
    const merged = await ctx.store.recordContinueRequest(run.runId, {
      input: null,
      statuses,
      deadlineMs: 30_000,
    });
    expect(merged).toMatchObject({ recorded: true, request: { input: 'also this' } });
    const after = (await ctx.store.getRun(run.runId))!;
    expect(after.deadlineAt!.getTime()).toBeGreaterThan(Date.now() + 20_000);
  });

  it('ends a tree past its deadline that no execution ended, by a fenced write its worker then loses to', async () => {
    const { team, teamEpoch, member, memberEpoch } = await runningTree({
      deadlineAt: passedMsAgo(1000),
    });
    const future = await ctx.store.createRun(newRun({ deadlineMs: 3_600_000 }));

    // Within the grace its worker is still expected to end it itself.
    const early = await recoveryIntents(ctx.store, {
      olderThanMs: 60_000,
      limit: 10,
      now: new Date(),
    });
    expect(early.deadlines).toEqual([]);
    expect((await ctx.store.getRun(team.runId))!.status).toBe('RUNNING');

    const plan = await recoveryIntents(ctx.store, { olderThanMs: 0, limit: 10, now: new Date() });
    expect(plan.deadlines).toEqual([
      { runId: team.runId, deadlineAt: team.deadlineAt, runIds: [team.runId, member.runId] },
    ]);
    // No job for it: its pickup would only find it ended.
    expect(plan.intents.map((i) => i.kind === 'enqueue' && i.job.runId)).not.toContain(team.runId);

    const view = (await ctx.store.getRunView(team.runId))!;
    expect(view).toMatchObject({
      status: 'ERROR',
      epoch: teamEpoch + 1,
      error: {
        name: 'DeadlineExceededError',
        message: expect.stringContaining(`run ${team.runId} passed its deadline`),
      },
    });
    expect(view.attempts.map((a) => [a.worker_id, a.outcome])).toEqual([['w1', 'error']]);
    const memberView = view.member_runs[0]!;
    expect(memberView).toMatchObject({
      status: 'ERROR',
      epoch: memberEpoch + 1,
      error: { message: expect.stringContaining(`run ${member.runId} passed its deadline`) },
    });
    expect(memberView.tools.map((c) => c.status)).toEqual(['error']);
    for (const runId of [team.runId, member.runId]) {
      const finals = await ctx.store.listEventsOfTypes(runId, ['RunError']);
      expect(finals).toHaveLength(1);
    }

    // The worker that held them (frozen, or its job still locked) writes nothing more.
    await expect(
      ctx.store.commitCheckpoint(team.runId, teamEpoch, batchDelta(1)),
    ).rejects.toBeInstanceOf(LeaseLostError);
    await expect(
      ctx.store.commitCheckpoint(member.runId, memberEpoch, batchDelta(1)),
    ).rejects.toBeInstanceOf(LeaseLostError);

    const again = await recoveryIntents(ctx.store, { olderThanMs: 0, limit: 10, now: new Date() });
    expect(again.deadlines).toEqual([]);
    expect((await ctx.store.getRun(future.runId))!.status).toBe('PENDING');
  });

  it('refuses to end a run whose epoch moved on since it was read', async () => {
    const run = await ctx.store.createRun(newRun({ deadlineMs: 1 }));
    await ctx.store.claimRun(run.runId, { workerId: 'w1', reason: 'run' });
    const ended = await ctx.store.endPastDeadline(run.runId, {
      epoch: 0,
      statuses: LIVE,
      errorOf: () => ({ name: 'DeadlineExceededError', message: 'passed' }),
    });
    expect(ended).toBeUndefined();
    expect((await ctx.store.getRun(run.runId))!).toMatchObject({ status: 'RUNNING', epoch: 1 });
  });

  it('sweeps runs past their deadline in small batches, earliest deadline first', async () => {
    const ids: string[] = [];
    // Created latest deadline first, so the sweep's order is the deadline's, not the creation's.
    const passed = passedMsAgo(1000).getTime();
    for (let i = 0; i < 3; i++) {
      const run = await ctx.store.createRun(newRun({ deadlineAt: new Date(passed - i) }));
      ids.unshift(run.runId);
    }
    const first = await recoveryIntents(ctx.store, { olderThanMs: 0, limit: 2, now: new Date() });
    expect(first.deadlines.map((d) => d.runId)).toEqual(ids.slice(0, 2));
    const second = await recoveryIntents(ctx.store, { olderThanMs: 0, limit: 2, now: new Date() });
    expect(second.deadlines.map((d) => d.runId)).toEqual(ids.slice(2));
    for (const id of ids) expect((await ctx.store.getRun(id))!.status).toBe('ERROR');
  });
});
