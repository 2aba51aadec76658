import { describe, expect, it } from 'vitest';
import {
  batchDelta,
  history,
  newRun,
  useStoreTestContext,
} from './test-support/store-test-context.js';

const ctx = useStoreTestContext();
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

describe('run and session views', () => {
  it('returns the run as the API shows it: snake_case, messages, tools, attempts, nested member runs', async () => {
    const parent = await ctx.store.createRun(
      newRun({
        entity: { kind: 'team', name: 'research-team' },
        userId: 'u1',
        messages: history(1),
        metadata: { m: 1 },
      }),
    );
    const first = await ctx.store.claimRun(parent.runId, { workerId: 'w1', reason: 'run' });
    const child = await ctx.store.createRun(
      newRun({
        sessionId: parent.sessionId,
        parentRunId: parent.runId,
        parentToolCallId: 't1',
        messages: history(1),
      }),
    );
    const childClaim = await ctx.store.claimRun(child.runId, { workerId: 'w1', reason: 'run' });
    await ctx.store.commitCheckpoint(child.runId, childClaim.epoch, batchDelta(1));
    const grandchild = await ctx.store.createRun(
      newRun({ sessionId: parent.sessionId, parentRunId: child.runId }),
    );
    await ctx.store.commitCheckpoint(parent.runId, first.epoch, batchDelta(1));
    const second = await ctx.store.claimRun(parent.runId, { workerId: 'w2', reason: 'recovered' });
    await ctx.store.finishRun(parent.runId, second.epoch, {
      status: 'COMPLETED',
      content: 'summary',
      error: null,
      delta: {
        messages: [{ role: 'assistant', content: 'summary' }],
        toolCalls: [],
        usage: { inputTokens: 5, outputTokens: 5, totalTokens: 10 },
      },
    });

    const view = await ctx.store.getRunView(parent.runId);
    expect(view).toMatchObject({
      run_id: parent.runId,
      session_id: parent.sessionId,
      user_id: 'u1',
      parent_run_id: null,
      entity: { kind: 'team', name: 'research-team' },
      status: 'COMPLETED',
      input: 'find things',
      content: 'summary',
      checkpoint: 'tool-batch',
      last_checkpoint_at_message_index: 6,
      epoch: 2,
      error: null,
      usage: { total_tokens: 10, input_tokens: 5, output_tokens: 5, cost_usd: 0 },
      metadata: { m: 1 },
    });
    // The tree's usage: the team's own and its member runs', recursively.
    expect(view!.usage_total.total_tokens).toBe(
      view!.usage.total_tokens + view!.member_runs[0]!.usage_total.total_tokens,
    );
    expect(view!.usage_total.total_tokens).toBe(110);
    expect(view?.messages).toEqual([
      ...history(1),
      ...batchDelta(1).messages,
      { role: 'assistant', content: 'summary' },
    ]);
    expect(view?.tools[0]).toEqual({
      tool_call_id: 'call_1_1',
      name: 'slow_fetch_detail',
      args: { item: 'item call_1_1' },
      result: expect.stringContaining('detail of call_1_1'),
      status: 'completed',
      batch: 1,
      idempotency_key: 'idem-call_1_1',
      child_run_id: null,
      started_at: expect.stringMatching(ISO),
      ended_at: expect.stringMatching(ISO),
    });
    expect(view?.attempts).toEqual([
      {
        epoch: 1,
        worker_id: 'w1',
        reason: 'run',
        started_at: expect.stringMatching(ISO),
        ended_at: expect.stringMatching(ISO),
        outcome: 'superseded',
      },
      {
        epoch: 2,
        worker_id: 'w2',
        reason: 'recovered',
        started_at: expect.stringMatching(ISO),
        ended_at: expect.stringMatching(ISO),
        outcome: 'completed',
      },
    ]);
    expect(view?.created_at).toMatch(ISO);
    expect(view?.member_runs.map((m) => m.run_id)).toEqual([child.runId]);
    const member = view?.member_runs[0];
    expect(member).toMatchObject({
      parent_run_id: parent.runId,
      parent_tool_call_id: 't1',
      status: 'RUNNING',
      last_checkpoint_at_message_index: 5,
    });
    expect(member?.messages).toHaveLength(5);
    expect(member?.member_runs.map((m) => m.run_id)).toEqual([grandchild.runId]);
    expect(JSON.parse(JSON.stringify(view))).toEqual(view);

    expect((await ctx.store.getRunView(child.runId))?.member_runs.map((m) => m.run_id)).toEqual([
      grandchild.runId,
    ]);
    expect(await ctx.store.getRunView('missing')).toBeUndefined();
  });

  it('reads one snapshot: a claim committing while the view reads never pairs one state of the run with the attempts of another', async () => {
    const run = await ctx.store.createRun(newRun());
    const torn: string[] = [];
    for (let i = 1; i <= 150; i++) {
      // The claim and the view race; whichever commits first, the view holds the run's epoch and its attempts together.
      const [, view] = await Promise.all([
        ctx.store.claimRun(run.runId, { workerId: `w${i}`, reason: 'recovered' }),
        ctx.store.getRunView(run.runId, { messages: false }),
      ]);
      const lastAttempt = view!.attempts.at(-1)?.epoch ?? 0;
      if (view!.epoch !== lastAttempt)
        torn.push(`epoch ${view!.epoch}, last attempt ${lastAttempt}`);
    }
    expect(torn).toEqual([]);
  });

  it('returns the session with its top-level runs', async () => {
    const a = await ctx.store.createRun(newRun({ userId: 'u1' }));
    await ctx.store.createRun(newRun({ sessionId: a.sessionId, parentRunId: a.runId }));
    const b = await ctx.store.createRun(newRun({ sessionId: a.sessionId, input: 'second' }));
    const session = await ctx.store.getSessionView({ tenantId: null, sessionId: a.sessionId });
    expect(session).toMatchObject({
      session_id: a.sessionId,
      user_id: 'u1',
      created_at: expect.stringMatching(ISO),
    });
    expect(session?.runs.map((r) => [r.run_id, r.input, r.status])).toEqual([
      [a.runId, 'find things', 'PENDING'],
      [b.runId, 'second', 'PENDING'],
    ]);
    expect(
      await ctx.store.getSessionView({ tenantId: null, sessionId: 'missing' }),
    ).toBeUndefined();
  });

  it('scopes sessions by tenant: the same id in two tenants (and in none) is three sessions, each with its own runs', async () => {
    const acme = await ctx.store.createRun(
      newRun({ sessionId: 'user-alice', tenantId: 'acme', userId: 'alice@acme' }),
    );
    const globex = await ctx.store.createRun(
      newRun({ sessionId: 'user-alice', tenantId: 'globex', userId: 'alice@globex' }),
    );
    const none = await ctx.store.createRun(newRun({ sessionId: 'user-alice' }));
    const runsOf = async (tenantId: string | null) =>
      (await ctx.store.getSessionView({ tenantId, sessionId: 'user-alice' }))?.runs.map(
        (r) => r.run_id,
      );
    expect(await runsOf('acme')).toEqual([acme.runId]);
    expect(await runsOf('globex')).toEqual([globex.runId]);
    expect(await runsOf(null)).toEqual([none.runId]);
    expect(await runsOf('initech')).toBeUndefined();
    expect(
      (await ctx.store.getSessionView({ tenantId: 'globex', sessionId: 'user-alice' }))?.user_id,
    ).toBe('alice@globex');
    expect([acme.tenantId, globex.tenantId, none.tenantId]).toEqual(['acme', 'globex', null]);
  });
  it('without messages still shows every tool result (stored once, in its tool message)', async () => {
    const run = await ctx.store.createRun(newRun({ messages: history(1) }));
    const claim = await ctx.store.claimRun(run.runId, { workerId: 'w1', reason: 'run' });
    await ctx.store.commitCheckpoint(run.runId, claim.epoch, batchDelta(1));

    const full = await ctx.store.getRunView(run.runId);
    const lean = await ctx.store.getRunView(run.runId, { messages: false });
    expect(lean?.messages).toEqual([]);
    expect(full?.tools[0]?.result).toEqual(expect.stringContaining('detail of call_1_1'));
    expect(lean?.tools).toEqual(full?.tools);
  });
});
