import { z } from 'zod';
import { assertWithinCaps, type CappedEntity } from '../entity-caps.js';
import { DecisionForbiddenError, InvalidDecisionError } from '../errors.js';
import type { ActionDecision, PendingActionRecord } from './pending-action.js';
import { budgetApproval, isTenantBudgetAction } from '../spend/budget.js';
import { budgetOf } from '../spend/budget-option.js';

/** Who decides (docs/spend.md): what a tenant key may not decide, an admin key may. */
export interface Decider {
  /** The tenant of the decider's key; null: an admin key (or an API without keys, or code in process). */
  tenantId: string | null;
  /** The entity of the run tree's root, with its caps: a tenant key's budget raise stays within them. */
  rootEntity?: CappedEntity;
}

/** An admin key's decisions: the default of code that decides in process. */
const ADMIN_DECIDER: Decider = { tenantId: null };

/**
 * Checks that a decision fits its action and its decider before it is
 * recorded: `result` only for an external action, `approve` and `edit` only
 * for an approval, edited arguments valid for the tool's JSON Schema as
 * recorded at the pause (so a producer with no tool code checks them), a
 * budget action as {@link validateBudgetDecision} says. Throws
 * `InvalidDecisionError`, `DecisionForbiddenError` or `CapExceededError`.
 */
export function validateDecision(
  action: PendingActionRecord,
  decision: ActionDecision,
  decider: Decider = ADMIN_DECIDER,
): void {
  if (action.kind === 'budget') return validateBudgetDecision(action, decision, decider);
  if (action.kind === 'suspended' && decision.type !== 'approve') {
    throw new InvalidDecisionError(
      action.actionId,
      `action ${action.actionId} is a suspension: decide approve to resume the run (or cancel the run)`,
    );
  }
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
 * approved with a raised `budget` (each limit above what was spent; from a
 * tenant key, not above the root entity's caps); its tenant's spent day is
 * decided by an admin key only, and approved as is (the run goes on for the
 * rest of that UTC day): a tenant key would lift its own day budget.
 */
function validateBudgetDecision(
  action: PendingActionRecord,
  decision: ActionDecision,
  decider: Decider,
): void {
  const tenant = isTenantBudgetAction(action.args) ? action.args : undefined;
  if (tenant && decider.tenantId !== null)
    throw new DecisionForbiddenError(
      action.actionId,
      `action ${action.actionId} is tenant ${tenant.tenant}'s spent day budget ($${tenant.budget.max_cost_usd}, CAIRN_TENANT_BUDGETS): only an admin key may decide it, and this key is bound to tenant ${decider.tenantId}`,
    );
  if (decision.type === 'reject') return;
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
  // An admin key may raise a budget past its entity's caps (the operator's own decision); a tenant's stays within them.
  if (decider.tenantId !== null && decider.rootEntity && decision.budget)
    assertWithinCaps(
      decider.rootEntity,
      { budget: budgetOf(decision.budget, 'budget') },
      'only an admin key may raise a budget past its cap',
    );
}
