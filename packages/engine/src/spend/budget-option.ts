import { UserError } from '../errors.js';

/** What a run's tree may spend: tokens, and cost in integer micro-dollars (each optional). */
export interface Budget {
  maxTokens?: number;
  maxCostMicroUsd?: number;
  /** How long a budget pause waits for a decision; then it is decided as rejected (the run ends in ERROR). */
  decisionTimeoutMs?: number;
}

/** A budget as users give it (`budget` on create, an entity's `budget` option): USD, not micro-dollars. */
export interface BudgetOption {
  maxTokens?: number;
  maxCostUsd?: number;
  /**
   * How long a budget pause waits for a person, in ms; undecided by then, it
   * is decided as rejected ("approval timed out") and the run ends in ERROR
   * (`BudgetExceededError`). Unset: it waits until decided or cancelled.
   */
  decisionTimeoutMs?: number;
}

/** The budget a user gave, checked (positive, finite, whole tokens) and in micro-dollars; `field` names it in the error. */
export function budgetOf(option: BudgetOption | undefined, field: string): Budget | undefined {
  if (option === undefined) return undefined;
  const { maxTokens, maxCostUsd, decisionTimeoutMs } = option;
  if (maxTokens === undefined && maxCostUsd === undefined)
    throw new UserError(`${field}: give max_tokens or max_cost_usd`);
  if (maxTokens !== undefined && !(Number.isInteger(maxTokens) && maxTokens > 0))
    throw new UserError(`${field}.max_tokens must be a positive integer, got ${String(maxTokens)}`);
  if (maxCostUsd !== undefined && !(Number.isFinite(maxCostUsd) && maxCostUsd > 0))
    throw new UserError(
      `${field}.max_cost_usd must be a positive number, got ${String(maxCostUsd)}`,
    );
  if (
    decisionTimeoutMs !== undefined &&
    !(Number.isInteger(decisionTimeoutMs) && decisionTimeoutMs > 0)
  )
    throw new UserError(
      `${field}.decision_timeout_ms must be a positive integer of milliseconds, got ${String(decisionTimeoutMs)}`,
    );
  return {
    ...(maxTokens !== undefined && { maxTokens }),
    ...(decisionTimeoutMs !== undefined && { decisionTimeoutMs }),
    ...(maxCostUsd !== undefined && { maxCostMicroUsd: Math.round(maxCostUsd * 1_000_000) }),
  };
}
