import { describe, expect, it } from 'vitest';
import { InvalidDecisionError, SuspendRequestedError } from '../errors.js';
import { validateDecision } from '../hitl/validate-decision.js';
import type { PendingActionRecord } from '../hitl/pending-action.js';
import { recordedAction } from '../hitl/pending-action-record.fixture.js';
import { PauseSignal } from '../runner/pause-signal.js';
import { judgeDecision } from './decide-actions.js';
import { endingOfError } from './run-ending.js';
import { canTransition, RUN_STATUSES } from './run-status.js';
import { suspendedAction, suspendedEventData, SuspendSwitch } from '../suspension.js';
import { SUSPEND_MOVE_BY_STATUS, suspendMoveOf } from './suspend-run.js';

function recorded(overrides: Partial<PendingActionRecord> = {}): PendingActionRecord {
  return recordedAction(suspendedAction('act-s', ['ops-agent'], 4, 2, 'operator'), overrides);
}

describe("an operator's suspend and resume", () => {
  it('suspends a queued or paused run at once, a running one at its next boundary, and refuses a finished one', () => {
    expect(RUN_STATUSES.filter((s) => SUSPEND_MOVE_BY_STATUS[s] === 'at-once')).toEqual([
      'PENDING',
      'PAUSED',
    ]);
    expect(RUN_STATUSES.filter((s) => canTransition(s, 'suspend'))).toEqual(['PENDING', 'PAUSED']);
    expect(SUSPEND_MOVE_BY_STATUS.RUNNING).toBe('at-boundary');
    // At the boundary, the execution's pause writes it: the `pause` transition.
    expect(canTransition('RUNNING', 'pause')).toBe(true);
    expect(RUN_STATUSES.filter((s) => SUSPEND_MOVE_BY_STATUS[s] === 'refused')).toEqual([
      'COMPLETED',
      'ERROR',
      'CANCELLED',
    ]);
    // The root moves with a run suspended at once only while no execution holds the tree.
    expect(suspendMoveOf('PENDING', 'PENDING')).toEqual({ move: 'at-once', idle: true });
    expect(suspendMoveOf('PAUSED', 'RUNNING')).toEqual({ move: 'at-once', idle: false });
    // A member not started yet while its team runs stops at its own boundary.
    expect(suspendMoveOf('PENDING', 'RUNNING')).toEqual({ move: 'at-boundary', idle: false });
  });

  it('makes one `suspended` action per epoch that never expires, and shows its reason in RunSuspended', () => {
    const action = suspendedAction(
      'act-s',
      ['research-team', 'researcher'],
      7,
      3,
      'operator',
      true,
    );
    expect(action).toMatchObject({
      kind: 'suspended',
      toolCallId: 'suspend:7',
      tool: 'suspend',
      args: { reason: 'operator', now: true },
      expiresAt: null,
      batch: 3,
    });
    const exhausted = suspendedAction('act-x', ['ops-agent'], 9, 0, 'attempts_exhausted');
    expect(exhausted.args).toEqual({ reason: 'attempts_exhausted' });
    expect(suspendedEventData(exhausted)).toMatchObject({
      reason: 'attempts_exhausted',
      action_id: 'act-x',
      actions: [{ action_id: 'act-x', kind: 'suspended' }],
    });
  });

  it('is resumed by an approval alone, recorded once; the same approval again is a no-op', () => {
    const approve = { actionId: 'act-s', decision: { type: 'approve' as const } };
    expect(() => validateDecision(recorded(), approve.decision)).not.toThrow();
    expect(() => validateDecision(recorded(), { type: 'reject' })).toThrow(InvalidDecisionError);
    expect(() => validateDecision(recorded(), { type: 'result', output: 'x' })).toThrow(
      /decide approve to resume/,
    );
    const paused = { runStatus: 'PAUSED' as const, pastExpiry: false };
    expect(judgeDecision(recorded(), approve, paused)).toBe('record');
    const decided = recorded({ status: 'decided', decision: { type: 'approve' } });
    expect(judgeDecision(decided, approve, { runStatus: 'RUNNING', pastExpiry: false })).toBe(
      'already-decided',
    );
  });

  it('stops only the execution its request names at a boundary', () => {
    const tree = new SuspendSwitch();
    tree.set(null);
    expect(tree.requestFor('team')).toBeUndefined();
    tree.set({ runId: 'member', now: false });
    expect(tree.requestFor('team')).toBeUndefined();
    expect(tree.requestFor('member')).toEqual({ runId: 'member', now: false });
    tree.set({ runId: 'member', now: true });
    expect(tree.requestFor('member')?.now).toBe(true);
  });

  it('ends every execution of a tree a `now` suspend aborted PAUSED, the named one with RunSuspended', () => {
    const controller = new AbortController();
    controller.abort(new SuspendRequestedError('team', 'member'));
    const ending = endingOfError(controller.signal.reason, controller.signal, []);
    expect(ending).toMatchObject({ status: 'PAUSED', event: { suspended_run_id: 'member' } });
    expect(ending.eventType).toBeUndefined();
    const signal = new PauseSignal('member', { reason: 'operator' }, 'RunSuspended');
    expect(endingOfError(signal, controller.signal, [])).toMatchObject({
      status: 'PAUSED',
      eventType: 'RunSuspended',
    });
  });
});
