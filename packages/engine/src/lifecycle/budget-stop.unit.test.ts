import { describe, expect, it } from 'vitest';
import type { PendingActionRecord } from '../hitl/pending-action.js';
import { recordedAction } from '../hitl/pending-action-record.fixture.js';
import { budgetAction } from '../spend/budget.js';
import { budgetStopOf } from './budget-stop.js';
import { canTransition } from './run-status.js';

const runArgs = {
  scope: 'run' as const,
  spent: { tokens: 120, cost_usd: 0.5 },
  budget: { max_tokens: 100, max_cost_usd: null },
};
const tenantArgs = {
  scope: 'tenant' as const,
  tenant: 'acme',
  day: '2026-12-04',
  spent: { cost_usd: 10 },
  budget: { max_cost_usd: 10 },
};

function recorded(overrides: Partial<PendingActionRecord> = {}): PendingActionRecord {
  return recordedAction(budgetAction('act-b', ['ops-agent'], 3, 1, runArgs, null), overrides);
}

const rejected = { status: 'decided' as const, decision: { type: 'reject' as const } };

describe('a run over budget', () => {
  it('pauses for a person (the `pause` transition) while no rejection of its budget waits', () => {
    expect(canTransition('RUNNING', 'pause')).toBe(true);
    expect(budgetStopOf([])).toEqual({ move: 'pause' });
    expect(budgetStopOf([recorded()])).toEqual({ move: 'pause' });
    const approved = recorded({ status: 'decided', decision: { type: 'approve' } });
    expect(budgetStopOf([approved])).toEqual({ move: 'pause' });
  });

  it('fails (the `fail` transition) on a budget action rejected by a person or by its expiry, with its message and scope', () => {
    expect(canTransition('RUNNING', 'fail')).toBe(true);
    const byPerson = recorded({
      ...rejected,
      decision: { type: 'reject', message: 'too dear' },
    });
    expect(budgetStopOf([byPerson])).toEqual({
      move: 'fail',
      actionId: 'act-b',
      message: 'too dear',
      scope: 'run',
    });
    const byExpiry = recorded({
      ...budgetAction('act-t', ['ops-agent'], 3, 1, tenantArgs, new Date(0)),
      status: 'expired',
      decision: { type: 'reject' },
    });
    expect(budgetStopOf([recorded(), byExpiry])).toEqual({
      move: 'fail',
      actionId: 'act-t',
      message: '',
      scope: 'tenant',
    });
  });

  it('asks again once the rejection was consumed, or when it was cancelled or made of another kind', () => {
    expect(budgetStopOf([recorded({ ...rejected, consumedAt: new Date(0) })])).toEqual({
      move: 'pause',
    });
    expect(budgetStopOf([recorded({ status: 'cancelled', decision: { type: 'reject' } })])).toEqual(
      { move: 'pause' },
    );
    expect(budgetStopOf([recorded({ ...rejected, kind: 'approval' })])).toEqual({ move: 'pause' });
  });
});
