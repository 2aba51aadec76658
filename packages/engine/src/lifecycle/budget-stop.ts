import type { PendingActionRecord } from '../hitl/pending-action.js';
import { isTenantBudgetAction, type BudgetStop } from '../spend/budget.js';

/**
 * The one rule of a run over budget, from its tree's actions: a budget action rejected (by a
 * person, or by its expiry: status `expired`) and not consumed yet ends the run; otherwise it
 * pauses with a new budget action. A cancelled action (its run cancelled or continued) is no
 * rejection. The runner is handed it (`TurnLoopSetup.budgetStop`) and carries the move out
 * (`runner/budget-check.ts`).
 */
export function budgetStopOf(actions: readonly PendingActionRecord[]): BudgetStop {
  const rejected = actions.find(
    (a) =>
      a.kind === 'budget' &&
      a.status !== 'cancelled' &&
      a.decision?.type === 'reject' &&
      a.consumedAt === null,
  );
  if (rejected?.decision?.type !== 'reject') return { move: 'pause' };
  return {
    move: 'fail',
    actionId: rejected.actionId,
    message: rejected.decision.message ?? '',
    scope: isTenantBudgetAction(rejected.args) ? 'tenant' : 'run',
  };
}
