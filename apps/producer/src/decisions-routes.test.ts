import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { digestArgs, jsonSchemaOf, type NewPendingAction } from '@cairn/engine';
import { z } from 'zod';
import type { RunView } from '@cairn/store';
import { openProducerFixture, type ProducerFixture } from './test-support/producer-fixture.js';

let fx: ProducerFixture;

beforeEach(async () => {
  fx = await openProducerFixture();
});
afterEach(async () => {
  await fx.close();
});

async function post(
  path: string,
  body: unknown,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fx.app.request(path, {
    method: 'POST',
    body: JSON.stringify(body),
    headers: { 'Content-Type': 'application/json' },
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

const EMPTY = {
  messages: [],
  toolCalls: [],
  usage: { inputTokens: 0, outputTokens: 0, totalTokens: 0 },
};

function searchAction(id: string, overrides: Partial<NewPendingAction> = {}): NewPendingAction {
  return {
    actionId: `act-${id}`,
    kind: 'approval',
    memberPath: ['research-team', 'researcher'],
    toolCallId: `call-${id}`,
    tool: 'slow_search',
    args: { query: id },
    argsDigest: digestArgs({ query: id }),
    argsSchema: jsonSchemaOf(z.object({ query: z.string() })),
    batch: 1,
    onTimeout: 'reject',
    expiresAt: null,
    ...overrides,
  };
}

/** A team run paused because its researcher member paused on `actions`, as the workers leave it. */
async function pausedTeam(
  actions: NewPendingAction[],
): Promise<{ teamId: string; memberId: string }> {
  const { store } = fx;
  const team = await fx.client.engine.createRun({
    entity: { kind: 'team', name: 'research-team' },
    input: 'Research X',
  });
  const teamClaim = await store.claimRun(team.runId, { workerId: 'test', reason: 'run' });
  const member = await store.createRun({
    entity: { kind: 'agent', name: 'researcher' },
    input: 'search',
    checkpoint: 'tool-batch',
    parentRunId: team.runId,
  });
  const memberClaim = await store.claimRun(member.runId, { workerId: 'test', reason: 'run' });
  await store.finishRun(member.runId, memberClaim.epoch, {
    status: 'PAUSED',
    content: null,
    error: null,
    delta: EMPTY,
    pendingActions: actions,
  });
  await store.finishRun(team.runId, teamClaim.epoch, {
    status: 'PAUSED',
    content: null,
    error: null,
    delta: EMPTY,
  });
  return { teamId: team.runId, memberId: member.runId };
}

describe('POST /v1/runs/:run_id/decisions', () => {
  it("lists a member's pending actions on its team's run view, with their member_path", async () => {
    const { teamId, memberId } = await pausedTeam([searchAction('a')]);
    const view = (await (await fx.app.request(`/v1/runs/${teamId}`)).json()) as RunView;
    expect(view.status).toBe('PAUSED');
    expect(view.pending_actions).toMatchObject([
      {
        action_id: 'act-a',
        kind: 'approval',
        run_id: memberId,
        member_path: ['research-team', 'researcher'],
        tool: 'slow_search',
        args: { query: 'a' },
        status: 'pending',
      },
    ]);
    expect(view.member_runs[0]?.pending_actions).toEqual(view.pending_actions);
  });

  it('applies decisions posted to the team or the member; the same again is already_decided; the last one enqueues the resume', async () => {
    const { teamId, memberId } = await pausedTeam([searchAction('a'), searchAction('b')]);
    const first = await post(`/v1/runs/${memberId}/decisions`, {
      decisions: [{ action_id: 'act-a', type: 'approve', args_digest: digestArgs({ query: 'a' }) }],
    });
    expect(first).toEqual({
      status: 200,
      body: { applied: ['act-a'], already_decided: [], pending: 1, status: 'PAUSED' },
    });
    expect(await fx.queue.liveJobFor(teamId)).toBeUndefined();

    const second = await post(`/v1/runs/${teamId}/decisions`, {
      decisions: [
        { action_id: 'act-a', type: 'approve' },
        { action_id: 'act-b', type: 'edit', args: { query: 'better' } },
      ],
    });
    expect(second).toEqual({
      status: 200,
      body: { applied: ['act-b'], already_decided: ['act-a'], pending: 0, status: 'PAUSED' },
    });
    const live = await fx.queue.liveJobFor(teamId);
    expect(live?.job.name).toBe('continue');
    expect(live?.job.id).toBe(`continue-${teamId}-resume-1`);

    const view = (await (await fx.app.request(`/v1/runs/${teamId}`)).json()) as RunView;
    expect(view.pending_actions).toEqual([]);
    const again = await post(`/v1/runs/${teamId}/decisions`, {
      decisions: [{ action_id: 'act-b', type: 'edit', args: { query: 'better' } }],
    });
    expect(again.body).toMatchObject({ applied: [], already_decided: ['act-b'] });
  });

  it('answers 404, 409, 410, 412 and 422 naming the action, and records nothing', async () => {
    const { teamId } = await pausedTeam([
      searchAction('a'),
      searchAction('b'),
      searchAction('x', { kind: 'external', tool: 'slow_search' }),
    ]);
    expect(
      (
        await post(`/v1/runs/00000000-0000-4000-8000-000000000000/decisions`, {
          decisions: [{ action_id: 'act-a', type: 'approve' }],
        })
      ).status,
    ).toBe(404);
    const unknown = await post(`/v1/runs/${teamId}/decisions`, {
      decisions: [{ action_id: 'act-zzz', type: 'approve' }],
    });
    expect(unknown).toMatchObject({
      status: 404,
      body: { error: 'action_not_found', message: expect.stringContaining('act-zzz') },
    });

    const stale = await post(`/v1/runs/${teamId}/decisions`, {
      decisions: [
        { action_id: 'act-b', type: 'approve' },
        { action_id: 'act-a', type: 'approve', args_digest: digestArgs({ query: 'old' }) },
      ],
    });
    expect(stale).toMatchObject({ status: 412, body: { error: 'args_digest_mismatch' } });

    const badEdit = await post(`/v1/runs/${teamId}/decisions`, {
      decisions: [{ action_id: 'act-a', type: 'edit', args: { query: 42 } }],
    });
    expect(badEdit).toMatchObject({
      status: 422,
      body: { error: 'invalid_decision', message: expect.stringContaining('query') },
    });
    const resultOnApproval = await post(`/v1/runs/${teamId}/decisions`, {
      decisions: [{ action_id: 'act-a', type: 'result', output: 'x' }],
    });
    expect(resultOnApproval).toMatchObject({
      status: 422,
      body: { message: expect.stringContaining('approval') },
    });
    const approveExternal = await post(`/v1/runs/${teamId}/decisions`, {
      decisions: [{ action_id: 'act-x', type: 'approve' }],
    });
    expect(approveExternal.status).toBe(422);
    expect((await fx.client.listPendingActions(teamId)).map((a) => a.actionId)).toEqual([
      'act-a',
      'act-b',
      'act-x',
    ]);

    expect(
      (
        await post(`/v1/runs/${teamId}/decisions`, {
          decisions: [{ action_id: 'act-a', type: 'reject', message: 'not now' }],
        })
      ).status,
    ).toBe(200);
    const conflict = await post(`/v1/runs/${teamId}/decisions`, {
      decisions: [{ action_id: 'act-a', type: 'approve' }],
    });
    expect(conflict).toMatchObject({
      status: 409,
      body: { error: 'decision_conflict', message: expect.stringContaining('act-a') },
    });

    await fx.store.db
      .updateTable('pending_actions')
      .set({ expires_at: sql`now() - interval '1 second'` })
      .where('action_id', '=', 'act-b')
      .execute();
    const expired = await post(`/v1/runs/${teamId}/decisions`, {
      decisions: [{ action_id: 'act-b', type: 'approve' }],
    });
    expect(expired).toMatchObject({ status: 410, body: { error: 'action_expired' } });
  });

  it('answers 409 for an undecided action whose run is no longer PAUSED (cancelled)', async () => {
    const { teamId } = await pausedTeam([searchAction('a')]);
    expect((await post(`/v1/runs/${teamId}/cancel`, {})).status).toBe(202);
    const res = await post(`/v1/runs/${teamId}/decisions`, {
      decisions: [{ action_id: 'act-a', type: 'approve' }],
    });
    expect(res.status).toBe(409);
  });

  it.each([
    [{}, 'decisions'],
    [{ decisions: [] }, 'decisions'],
    [{ decisions: [{ action_id: 'act-a', type: 'maybe' }] }, 'decisions.0.type'],
    [{ decisions: [{ action_id: 'act-a', type: 'edit' }] }, 'decisions.0.args'],
    [{ decisions: [{ action_id: 'act-a', type: 'result' }] }, 'decisions.0.output'],
    [
      { decisions: [{ action_id: 'act-a', type: 'approve', args_digest: 'abc' }] },
      'decisions.0.args_digest',
    ],
    [{ decisions: [{ action_id: 'act-a', type: 'approve', extra: 1 }] }, 'decisions.0.extra'],
  ])('answers 400 naming the field for %j', async (body, field) => {
    const { teamId } = await pausedTeam([searchAction('a')]);
    const res = await post(`/v1/runs/${teamId}/decisions`, body);
    expect(res.status).toBe(400);
    expect((res.body.issues as { path: string }[]).map((i) => i.path)).toContain(field);
    expect(await fx.client.listPendingActions(teamId)).toHaveLength(1);
  });

  it('refuses to continue a paused run (409), naming the pending actions', async () => {
    const { teamId } = await pausedTeam([searchAction('a'), searchAction('b')]);
    const res = await post(`/v1/runs/${teamId}/continue`, {});
    expect(res).toMatchObject({
      status: 409,
      body: { error: 'run_not_continuable', message: expect.stringContaining('act-a, act-b') },
    });
  });

  it('refuses the removed approvals field of the continue body (400)', async () => {
    const { teamId } = await pausedTeam([searchAction('a')]);
    const res = await post(`/v1/runs/${teamId}/continue`, { approvals: { 'act-a': true } });
    expect(res).toMatchObject({
      status: 400,
      body: { issues: [{ path: 'approvals', message: 'unknown field' }] },
    });
  });
});
