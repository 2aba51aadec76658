import type { NewPendingAction, PendingActionRecord } from './pending-action.js';

/**
 * For unit tests of the rules that read actions: `action` as the store returns it once recorded,
 * pending on run `run-1` (a root run), created at the epoch, with `overrides` on top.
 */
export function recordedAction(
  action: NewPendingAction,
  overrides: Partial<PendingActionRecord> = {},
): PendingActionRecord {
  return {
    ...action,
    runId: 'run-1',
    rootRunId: 'run-1',
    status: 'pending',
    decision: null,
    decidedAt: null,
    consumedAt: null,
    consumedEpoch: null,
    createdAt: new Date(0),
    ...overrides,
  };
}
