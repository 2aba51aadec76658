import { z } from 'zod';
import { InvalidDecisionError } from '../errors.js';
import type { Registry } from '../registry.js';
import type { ActionDecision, PendingActionRecord } from './pending-action.js';

/**
 * Checks that a decision fits its action before it is recorded: `result`
 * only for an external action, `approve` and `edit` only for an approval,
 * edited arguments valid for the tool's schema. Throws `InvalidDecisionError`.
 */
export function validateDecision(registry: Registry, action: PendingActionRecord, decision: ActionDecision): void {
  if (action.kind === 'approval' && decision.type === 'result') {
    throw new InvalidDecisionError(action.actionId, `action ${action.actionId} is an approval: decide approve, edit or reject (result is for external actions)`);
  }
  if (action.kind === 'external' && (decision.type === 'approve' || decision.type === 'edit')) {
    throw new InvalidDecisionError(action.actionId, `action ${action.actionId} is external: decide result (with the output) or reject`);
  }
  if (decision.type !== 'edit') return;
  const parameters = toolParameters(registry, action);
  if (!parameters) return; // the worker checks the edited arguments again against the tool it runs
  const parsed = parameters.safeParse(decision.args);
  if (!parsed.success) {
    throw new InvalidDecisionError(
      action.actionId,
      `action ${action.actionId}: edited args are invalid for tool "${action.tool}": ${z.prettifyError(parsed.error)}`,
    );
  }
}

function toolParameters(registry: Registry, action: PendingActionRecord): z.ZodObject | undefined {
  const agentName = action.memberPath.at(-1);
  if (agentName === undefined || !registry.has({ kind: 'agent', name: agentName })) return undefined;
  const agent = registry.get({ kind: 'agent', name: agentName });
  if (agent.kind !== 'agent') return undefined;
  return agent.tools.find((t) => t.name === action.tool)?.parameters;
}
