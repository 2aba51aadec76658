import { describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import {
  ActionExpiredError,
  ActionNotFoundError,
  ArgsDigestMismatchError,
  DecisionConflictError,
  InvalidDecisionError,
  LeaseLostError,
  RunNotContinuableError,
  digestArgs,
} from '@cairn/engine';
import type { Message, NewPendingAction, ToolCallRecord } from '@cairn/engine';
import type { NewRun } from '@cairn/engine/store';
import { createDb } from './create-db.js';
import { PostgresCheckpointStore } from './postgres-checkpoint-store.js';
import { newRun, useStoreTestContext } from './test-support/store-test-context.js';

const ctx = useStoreTestContext();
const acceptAll = () => undefined;

function gatedTurn(ids: string[]): Message {
  return {
    role: 'assistant',
    content: null,
    toolCalls: ids.map((id) => ({
      id,
      name: 'restart_service',
      arguments: JSON.stringify({ service: id }),
    })),
  };
}

function action(id: string, overrides: Partial<NewPendingAction> = {}): NewPendingAction {
  return {
    actionId: `act-${id}`,
    kind: 'approval',
    memberPath: ['ops-agent'],
    toolCallId: id,
    tool: 'restart_service',
    args: { service: id },
    argsDigest: digestArgs({ service: id }),
    argsSchema: null,
    batch: 1,
    onTimeout: 'reject',
    expiresAt: null,
    ...overrides,
  };
}

/** A run paused on one turn whose calls are all gated. */
async function pausedRun(
  ids: string[],
  overrides: Partial<NewPendingAction> = {},
  parentRunId?: string,
  runFields: Partial<NewRun> = {},
) {
  const run = await ctx.store.createRun(newRun({ parentRunId: parentRunId ?? null, ...runFields }));
  const { epoch } = await ctx.store.claimRun(run.runId, { workerId: 'w1', reason: 'run' });
  await ctx.store.finishRun(run.runId, epoch, {
    status: 'PAUSED',
    content: null,
    error: null,
    delta: {
      messages: [{ role: 'user', content: 'go' }, gatedTurn(ids)],
      toolCalls: [],
      usage: { inputTokens: 0, outputTokens: 0, totalTokens: 0 },
    },
    pendingActions: ids.map((id) => action(id, overrides)),
  });
  return { runId: run.runId, epoch };
}

describe('pending actions', () => {
  it('a pause commits the turn and one pending action per gated call, listed for the run and its team', async () => {
    const team = await ctx.store.createRun(newRun({ entity: { kind: 'team', name: 'ops-team' } }));
    const member = await pausedRun(
      ['a', 'b'],
      { memberPath: ['ops-team', 'ops-agent'] },
      team.runId,
    );
    expect((await ctx.store.getRun(member.runId))?.status).toBe('PAUSED');
    const forTeam = await ctx.store.listPendingActions(team.runId);
    expect(forTeam).toMatchObject([
      {
        actionId: 'act-a',
        runId: member.runId,
        rootRunId: team.runId,
        memberPath: ['ops-team', 'ops-agent'],
        status: 'pending',
        decision: null,
      },
      { actionId: 'act-b', runId: member.runId, rootRunId: team.runId, status: 'pending' },
    ]);
    expect(await ctx.store.listPendingActions(member.runId)).toEqual(forTeam);
    const history = await ctx.store.loadHistory(member.runId);
    expect(history.messages).toHaveLength(2);
  });

  it('records each decision once: the same again is a no-op, a different one is refused', async () => {
    const { runId } = await pausedRun(['a']);
    const first = await ctx.store.decideActions(
      runId,
      [{ actionId: 'act-a', decision: { type: 'approve' } }],
      acceptAll,
    );
    expect(first).toEqual({
      applied: ['act-a'],
      alreadyDecided: [],
      pending: 0,
      status: 'PAUSED',
      resume: { rootRunId: runId, pausedEpoch: 1, tenantId: null, priority: 5 },
    });
    const again = await ctx.store.decideActions(
      runId,
      [{ actionId: 'act-a', decision: { type: 'approve' } }],
      acceptAll,
    );
    expect(again).toEqual({ applied: [], alreadyDecided: ['act-a'], pending: 0, status: 'PAUSED' });
    await expect(
      ctx.store.decideActions(
        runId,
        [{ actionId: 'act-a', decision: { type: 'reject', message: 'no' } }],
        acceptAll,
      ),
    ).rejects.toThrow(DecisionConflictError);
    const [stored] = await ctx.store.listRunActions(runId);
    expect(stored).toMatchObject({ status: 'decided', decision: { type: 'approve' } });
    const events = await ctx.store.listEvents(runId);
    expect(events.map((e) => [e.type, e.data])).toEqual([
      ['ActionDecided', { action_id: 'act-a', type: 'approve', member_path: ['ops-agent'] }],
    ]);
  });

  it('partial decisions leave the run paused with the rest pending; the last one asks for the resume', async () => {
    const { runId } = await pausedRun(['a', 'b', 'c']);
    const decide = (id: string) =>
      ctx.store.decideActions(
        runId,
        [{ actionId: `act-${id}`, decision: { type: 'approve' } }],
        acceptAll,
      );
    expect(await decide('b')).toMatchObject({ applied: ['act-b'], pending: 2 });
    expect((await decide('a')).resume).toBeUndefined();
    const resume = { workerId: 'w2', reason: 'continue' as const, from: ['PAUSED' as const] };
    await expect(ctx.store.claimRun(runId, resume)).rejects.toThrow(RunNotContinuableError);
    expect(await decide('c')).toMatchObject({
      applied: ['act-c'],
      pending: 0,
      resume: { rootRunId: runId },
    });
    // A plain pickup never claims a paused run; only the resume does.
    await expect(ctx.store.claimRun(runId, { workerId: 'w2', reason: 'continue' })).rejects.toThrow(
      RunNotContinuableError,
    );
    const claim = await ctx.store.claimRun(runId, resume);
    expect(claim.run.status).toBe('RUNNING');
  });

  it('answers a stale digest, an unknown action, an expired one and an invalid decision without recording anything', async () => {
    const { runId } = await pausedRun(['a', 'b']);
    const approveA = { actionId: 'act-a', decision: { type: 'approve' as const } };
    await expect(
      ctx.store.decideActions(
        runId,
        [
          approveA,
          {
            actionId: 'act-b',
            decision: { type: 'approve' },
            argsDigest: digestArgs({ service: 'other' }),
          },
        ],
        acceptAll,
      ),
    ).rejects.toThrow(ArgsDigestMismatchError);
    await expect(
      ctx.store.decideActions(
        runId,
        [approveA, { actionId: 'nope', decision: { type: 'approve' } }],
        acceptAll,
      ),
    ).rejects.toThrow(ActionNotFoundError);
    await expect(
      ctx.store.decideActions(runId, [approveA], () => {
        throw new InvalidDecisionError('act-a', 'bad');
      }),
    ).rejects.toThrow(InvalidDecisionError);
    expect((await ctx.store.listPendingActions(runId)).map((a) => a.actionId)).toEqual([
      'act-a',
      'act-b',
    ]);
    expect(await ctx.store.listEvents(runId)).toEqual([]);

    await ctx.db
      .updateTable('pending_actions')
      .set({ expires_at: sql`now() - interval '1 second'` })
      .where('action_id', '=', 'act-b')
      .execute();
    await expect(
      ctx.store.decideActions(
        runId,
        [{ actionId: 'act-b', decision: { type: 'approve' } }],
        acceptAll,
      ),
    ).rejects.toThrow(ActionExpiredError);
    const ok = await ctx.store.decideActions(
      runId,
      [{ ...approveA, argsDigest: digestArgs({ service: 'a' }) }],
      acceptAll,
    );
    expect(ok.applied).toEqual(['act-a']);
  });

  it('refuses a decision on an undecided action whose run is no longer PAUSED', async () => {
    const { runId } = await pausedRun(['a']);
    await ctx.db.updateTable('runs').set({ status: 'ERROR' }).where('run_id', '=', runId).execute();
    await expect(
      ctx.store.decideActions(
        runId,
        [{ actionId: 'act-a', decision: { type: 'approve' } }],
        acceptAll,
      ),
    ).rejects.toThrow(/no longer PAUSED/);
  });

  it('cancelling a paused run cancels its pending actions', async () => {
    const team = await ctx.store.createRun(newRun({ entity: { kind: 'team', name: 'ops-team' } }));
    const teamClaim = await ctx.store.claimRun(team.runId, { workerId: 'w1', reason: 'run' });
    const member = await pausedRun(['a'], {}, team.runId);
    await ctx.store.finishRun(team.runId, teamClaim.epoch, {
      status: 'PAUSED',
      content: null,
      error: null,
      delta: {
        messages: [],
        toolCalls: [],
        usage: { inputTokens: 0, outputTokens: 0, totalTokens: 0 },
      },
    });
    expect((await ctx.store.forceCancel(team.runId))?.status).toBe('CANCELLED');
    expect((await ctx.store.getRun(member.runId))?.status).toBe('CANCELLED');
    expect(await ctx.store.listRunActions(member.runId)).toMatchObject([{ status: 'cancelled' }]);
    await expect(
      ctx.store.decideActions(
        team.runId,
        [{ actionId: 'act-a', decision: { type: 'approve' } }],
        acceptAll,
      ),
    ).rejects.toThrow(/cancelled/);
  });

  it('consumes a decided action once, only under the epoch holding the run', async () => {
    const { runId } = await pausedRun(['a']);
    await ctx.store.decideActions(
      runId,
      [{ actionId: 'act-a', decision: { type: 'approve' } }],
      acceptAll,
    );
    const { epoch } = await ctx.store.claimRun(runId, {
      workerId: 'w2',
      reason: 'continue',
      from: ['PAUSED'],
    });
    await expect(ctx.store.consumeAction(runId, epoch - 1, 'act-a')).rejects.toThrow(
      LeaseLostError,
    );
    expect(await ctx.store.consumeAction(runId, epoch, 'act-a')).toBe(true);
    expect(await ctx.store.consumeAction(runId, epoch, 'act-a')).toBe(false);
    const next = await ctx.store.claimRun(runId, { workerId: 'w3', reason: 'recovered' });
    expect(await ctx.store.consumeAction(runId, next.epoch, 'act-a')).toBe(false);
    expect(await ctx.store.listRunActions(runId)).toMatchObject([{ consumedEpoch: epoch }]);
  });

  it('two different decisions racing from two connections: exactly one is recorded', async () => {
    const { runId } = await pausedRun(['a']);
    const other = createDb(ctx.url, { max: 2 });
    try {
      const second = new PostgresCheckpointStore(other);
      const results = await Promise.allSettled([
        ctx.store.decideActions(
          runId,
          [{ actionId: 'act-a', decision: { type: 'approve' } }],
          acceptAll,
        ),
        second.decideActions(
          runId,
          [{ actionId: 'act-a', decision: { type: 'reject', message: 'no' } }],
          acceptAll,
        ),
      ]);
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
      const failed = results.find((r) => r.status === 'rejected');
      expect(failed?.status === 'rejected' && failed.reason).toBeInstanceOf(DecisionConflictError);
      expect(await ctx.store.listEvents(runId)).toHaveLength(1);
    } finally {
      await other.destroy();
    }
  });

  it('expiry rejects with "approval timed out" by default, or ends the tree in ERROR', async () => {
    const past = new Date(Date.now() - 1000);
    // The resume carries the root's tenant and priority: its slot in the tenant's fair line.
    const rejecting = await pausedRun(['a'], { expiresAt: past }, undefined, {
      tenantId: 'acme',
      priority: 2,
    });
    expect(await ctx.store.expireAction('act-a')).toEqual({
      kind: 'rejected',
      resume: { rootRunId: rejecting.runId, pausedEpoch: 1, tenantId: 'acme', priority: 2 },
    });
    expect(await ctx.store.listRunActions(rejecting.runId)).toMatchObject([
      { status: 'expired', decision: { type: 'reject', message: 'approval timed out' } },
    ]);
    expect(await ctx.store.expireAction('act-a')).toEqual({ kind: 'unchanged' });

    const team = await ctx.store.createRun(newRun({ entity: { kind: 'team', name: 'ops-team' } }));
    const teamClaim = await ctx.store.claimRun(team.runId, { workerId: 'w1', reason: 'run' });
    const member = await ctx.store.createRun(newRun({ parentRunId: team.runId }));
    const memberClaim = await ctx.store.claimRun(member.runId, { workerId: 'w1', reason: 'run' });
    const empty = {
      messages: [],
      toolCalls: [] as ToolCallRecord[],
      usage: { inputTokens: 0, outputTokens: 0, totalTokens: 0 },
    };
    await ctx.store.finishRun(member.runId, memberClaim.epoch, {
      status: 'PAUSED',
      content: null,
      error: null,
      delta: empty,
      pendingActions: [
        action('x', { onTimeout: 'error', expiresAt: past }),
        action('y', { expiresAt: new Date(Date.now() + 60_000) }),
      ],
    });
    await ctx.store.finishRun(team.runId, teamClaim.epoch, {
      status: 'PAUSED',
      content: null,
      error: null,
      delta: empty,
    });
    expect(await ctx.store.expireAction('act-y')).toEqual({ kind: 'unchanged' });
    const outcome = await ctx.store.expireAction('act-x');
    expect(outcome.kind === 'errored' && [...outcome.runIds].sort()).toEqual(
      [team.runId, member.runId].sort(),
    );
    expect((await ctx.store.getRun(team.runId))?.error).toMatchObject({
      name: 'ApprovalTimeoutError',
    });
    expect((await ctx.store.listRunActions(member.runId)).map((a) => a.status)).toEqual([
      'expired',
      'cancelled',
    ]);
    expect((await ctx.store.listEvents(member.runId)).map((e) => e.type)).toEqual([
      'ActionExpired',
      'RunError',
    ]);
  });
});
