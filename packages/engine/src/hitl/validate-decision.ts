import { z } from 'zod';
import { InvalidDecisionError } from '../errors.js';
import type { ActionDecision, PendingActionRecord } from './pending-action.js';
import { budgetApproval, isTenantBudgetAction } from '../spend/budget.js';

/**
 * Checks that a decision fits its action before it is recorded: `result`
 * only for an external action, `approve` and `edit` only for an approval,
 * edited arguments valid for the tool's JSON Schema as recorded at the pause
 * (so a producer with no tool code checks them). Throws `InvalidDecisionError`.
 */
export function validateDecision(action: PendingActionRecord, decision: ActionDecision): void {
  if (action.kind === 'budget') return validateBudgetDecision(action, decision);
  if (action.kind === 'approval' && decision.type === 'result') {
    throw new InvalidDecisionError(
      action.actionId,
      `action ${action.actionId} is an approval: decide approve, edit or reject (result is for external actions)`,
    );
  }
  if (action.kind === 'external' && (decision.type === 'approve' || decision.type === 'edit')) {
    throw new InvalidDecisionError(
      action.actionId,
      `action ${action.actionId} is external: decide result (with the output) or reject`,
    );
  }
  if (decision.type !== 'edit' || action.argsSchema === null) return;
  const parsed = z
    .fromJSONSchema(action.argsSchema as Parameters<typeof z.fromJSONSchema>[0])
    .safeParse(decision.args);
  if (!parsed.success) {
    throw new InvalidDecisionError(
      action.actionId,
      `action ${action.actionId}: edited args are invalid for tool "${action.tool}": ${z.prettifyError(parsed.error)}`,
    );
  }
}

/**
 * A budget action takes `approve` or `reject`: the run's own budget is
 * approved with a raised `budget` (each limit above what was spent); its
 * tenant's spent day is approved as is (the run goes on for the rest of that UTC day).
 */
function validateBudgetDecision(action: PendingActionRecord, decision: ActionDecision): void {
  if (decision.type === 'reject') return;
  const tenant = isTenantBudgetAction(action.args) ? action.args : undefined;
  if (decision.type !== 'approve' || (decision.budget === undefined && !tenant)) {
    throw new InvalidDecisionError(
      action.actionId,
      tenant
        ? `action ${action.actionId} is tenant ${tenant.tenant}'s spent day: decide approve (the run goes on for the rest of ${tenant.day}, UTC) or reject`
        : `action ${action.actionId} is a budget: decide approve with a raised budget ({ "type": "approve", "budget": { "max_cost_usd": ... } }) or reject`,
    );
  }
  try {
    budgetApproval(action, null, decision.budget);
  } catch (error) {
    throw new InvalidDecisionError(
      action.actionId,
      `action ${action.actionId}: ${(error as Error).message}`,
    );
  }
}
