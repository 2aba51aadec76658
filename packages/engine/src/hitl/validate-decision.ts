import { z } from 'zod';
import { InvalidDecisionError } from '../errors.js';
import type { ActionDecision, PendingActionRecord } from './pending-action.js';
import { raisedBudget } from '../spend/budget.js';

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

/** A budget action takes `approve` with a raised `budget` (each limit above what was spent) or `reject`. */
function validateBudgetDecision(action: PendingActionRecord, decision: ActionDecision): void {
  if (decision.type === 'reject') return;
  if (decision.type !== 'approve' || decision.budget === undefined) {
    throw new InvalidDecisionError(
      action.actionId,
      `action ${action.actionId} is a budget: decide approve with a raised budget ({ "type": "approve", "budget": { "max_cost_usd": ... } }) or reject`,
    );
  }
  try {
    raisedBudget(action, null, decision.budget);
  } catch (error) {
    throw new InvalidDecisionError(
      action.actionId,
      `action ${action.actionId}: ${(error as Error).message}`,
    );
  }
}
