import { z } from 'zod';
import { InvalidDecisionError } from '../errors.js';
import type { ActionDecision, PendingActionRecord } from './pending-action.js';

/**
 * Checks that a decision fits its action before it is recorded: `result`
 * only for an external action, `approve` and `edit` only for an approval,
 * edited arguments valid for the tool's JSON Schema as recorded at the pause
 * (so a producer with no tool code checks them). Throws `InvalidDecisionError`.
 */
export function validateDecision(action: PendingActionRecord, decision: ActionDecision): void {
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
