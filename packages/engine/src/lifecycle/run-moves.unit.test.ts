import { describe, expect, it } from 'vitest';
import { ActionExpiredError, ArgsDigestMismatchError, DecisionConflictError } from '../errors.js';
import { digestArgs, type PendingActionRecord } from '../hitl/pending-action.js';
import { judgeDecision, resumeWhenDecided } from './decide-actions.js';
import { APPROVAL_TIMED_OUT, expiryMoveOf } from './expire-actions.js';
import { forkRefusalOf } from './fork-run.js';
import { continueIntents, createdRunIntents, resumeIntent } from './intents.js';
import { canTransition, CLAIM_CONDITION_BY_STATUS, RUN_STATUSES } from './run-status.js';
import type { CreatedRun, RunRecord } from '../run-types.js';

function action(overrides: Partial<PendingActionRecord> = {}): PendingActionRecord {
  return {
    actionId: 'act-a',
    kind: 'approval',
    runId: 'run-1',
    rootRunId: 'run-1',
    memberPath: ['ops-agent'],
    toolCallId: 'a',
    tool: 'restart_service',
    args: { service: 'a' },
    argsDigest: digestArgs({ service: 'a' }),
    argsSchema: null,
    batch: 1,
    status: 'pending',
    decision: null,
    onTimeout: 'reject',
    expiresAt: null,
    decidedAt: null,
    consumedAt: null,
    consumedEpoch: null,
    createdAt: new Date(0),
    ...overrides,
  };
}

const paused = { runStatus: 'PAUSED' as const, pastExpiry: false };

describe('the moves of a run outside an execution', () => {
  it('records a decision only on an undecided action of a PAUSED run before its expiry; the same again is a no-op', () => {
    const approve = { actionId: 'act-a', decision: { type: 'approve' as const } };
    expect(judgeDecision(action(), approve, paused)).toBe('record');
    expect(() =>
      judgeDecision(action(), approve, { runStatus: 'ERROR', pastExpiry: false }),
    ).toThrow(/no longer PAUSED/);
    expect(() =>
      judgeDecision(action(), approve, { runStatus: 'PAUSED', pastExpiry: true }),
    ).toThrow(ActionExpiredError);
    expect(() =>
      judgeDecision(action(), { ...approve, argsDigest: digestArgs({ service: 'b' }) }, paused),
    ).toThrow(ArgsDigestMismatchError);
    const decided = action({ status: 'decided', decision: { type: 'reject' } });
    // The same decision is a no-op at any time, also once the run went on.
    expect(
      judgeDecision(
        decided,
        { actionId: 'act-a', decision: { type: 'reject', message: '' } },
        { runStatus: 'RUNNING', pastExpiry: true },
      ),
    ).toBe('already-decided');
    expect(() => judgeDecision(decided, approve, paused)).toThrow(DecisionConflictError);
    expect(() => judgeDecision(action({ status: 'cancelled' }), approve, paused)).toThrow(
      /cancelled with its run/,
    );
  });

  it('resumes a tree when its last action is decided, once, and only while its root is PAUSED', () => {
    const tree = {
      rootRunId: 'root',
      rootStatus: 'PAUSED' as const,
      rootEpoch: 3,
      rootTenantId: 'acme',
      rootPriority: 2,
      pending: 0,
      decidedNow: true,
    };
    const resume = { rootRunId: 'root', pausedEpoch: 3, tenantId: 'acme', priority: 2 };
    expect(resumeWhenDecided(tree)).toEqual(resume);
    expect(resumeWhenDecided({ ...tree, pending: 1 })).toBeUndefined();
    expect(resumeWhenDecided({ ...tree, decidedNow: false })).toBeUndefined();
    expect(resumeWhenDecided({ ...tree, rootStatus: 'CANCELLED' })).toBeUndefined();
    // The resume takes a slot in the root's tenant's fair line, as a new run's job does.
    expect(resumeIntent(resume, 'decided')).toEqual({
      kind: 'enqueue',
      job: {
        name: 'continue',
        runId: 'root',
        reason: 'continue',
        resumeOf: 3,
        tenant: 'acme',
        priority: 2,
      },
      cause: 'decided',
    });
  });

  it('expires an action by rejecting it, or ends its paused tree in ERROR by a transition of the table', () => {
    expect(expiryMoveOf(action())).toEqual({
      kind: 'reject',
      decision: { type: 'reject', message: APPROVAL_TIMED_OUT },
    });
    const move = expiryMoveOf(action({ onTimeout: 'error' }));
    expect(move.kind === 'error' && move.transition).toEqual({ from: ['PAUSED'], to: 'ERROR' });
    expect(move.kind === 'error' && move.error.name).toBe('ApprovalTimeoutError');
    expect(RUN_STATUSES.filter((s) => canTransition(s, 'approvalTimeout'))).toEqual(['PAUSED']);
  });

  it('forks a run in any status but PENDING, and a member run only through its team', () => {
    expect(RUN_STATUSES.filter((s) => forkRefusalOf(s, null) === null)).toEqual([
      'RUNNING',
      'COMPLETED',
      'ERROR',
      'CANCELLED',
      'PAUSED',
    ]);
    expect(forkRefusalOf('PENDING', null)).toBe('not-started');
    expect(forkRefusalOf('COMPLETED', 'team-run')).toBe('member');
  });

  it('claims a PAUSED run only once its tree is decided, every other status by its status alone', () => {
    expect(RUN_STATUSES.filter((s) => CLAIM_CONDITION_BY_STATUS[s] === 'tree-decided')).toEqual([
      'PAUSED',
    ]);
  });

  it("asks the queue for a created run's first job and a continue's job in the run's tenant's fair line, never for a replayed or queued run", () => {
    const run = { runId: 'r1', tenantId: 'acme', priority: 3 } as RunRecord;
    expect(createdRunIntents({ ...run, replayed: false } as CreatedRun)).toEqual([
      {
        kind: 'enqueue',
        job: { name: 'run', runId: 'r1', tenant: 'acme', priority: 3 },
        cause: 'created',
      },
    ]);
    expect(createdRunIntents({ runId: 'r1', replayed: true } as CreatedRun)).toEqual([]);
    expect(continueIntents({ action: 'resume', run })).toEqual([
      {
        kind: 'enqueue',
        job: { name: 'continue', runId: 'r1', reason: 'continue', tenant: 'acme', priority: 3 },
        cause: 'continued',
      },
    ]);
    const fork = { runId: 'r2', tenantId: null, priority: 5 } as RunRecord;
    expect(continueIntents({ action: 'fork', run: fork })).toEqual([
      {
        kind: 'enqueue',
        job: { name: 'run', runId: 'r2', tenant: null, priority: 5 },
        cause: 'forked',
      },
    ]);
    expect(continueIntents({ action: 'already-queued', run })).toEqual([]);
  });
});
