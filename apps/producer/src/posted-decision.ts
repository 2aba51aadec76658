import type { ActionDecision, PostedDecision } from '@cairn/engine';
import { budgetOptionOf } from './budget-option.js';
import type { DecisionsBody } from './request-schemas.js';

/** One decision of a decisions body (`POST /v1/runs/:run_id/decisions`, the MCP `decide_actions` tool) as the engine takes it. */
export function toPostedDecision(d: DecisionsBody['decisions'][number]): PostedDecision {
  const decision: ActionDecision =
    d.type === 'approve'
      ? { type: 'approve', ...(d.budget && { budget: budgetOptionOf(d.budget) }) }
      : d.type === 'edit'
        ? { type: 'edit', args: d.args }
        : d.type === 'reject'
          ? { type: 'reject', ...(d.message !== undefined && { message: d.message }) }
          : {
              type: 'result',
              output: d.output,
              ...(d.is_error !== undefined && { isError: d.is_error }),
            };
  return {
    actionId: d.action_id,
    decision,
    ...(d.args_digest !== undefined && { argsDigest: d.args_digest }),
  };
}
