import type { BudgetOption } from '@cairn/engine';

/** A budget as the API names its fields, as the engine takes it. */
export function budgetOptionOf(budget: {
  max_tokens?: number;
  max_cost_usd?: number;
  decision_timeout_ms?: number;
}): BudgetOption {
  return {
    ...(budget.max_tokens !== undefined && { maxTokens: budget.max_tokens }),
    ...(budget.max_cost_usd !== undefined && { maxCostUsd: budget.max_cost_usd }),
    ...(budget.decision_timeout_ms !== undefined && {
      decisionTimeoutMs: budget.decision_timeout_ms,
    }),
  };
}
