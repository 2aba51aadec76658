import { isDeadlineMs, MAX_DEADLINE_MS } from '../deadline-ms.js';
import { UserError } from '../errors.js';

/** The smallest cost limit a budget may hold: one micro-dollar (costs are kept in integer micro-dollars). */
export const MIN_BUDGET_USD = 0.000001;
/** The largest cost limit a budget may hold, in USD: a tree with no cost limit names none. */
export const MAX_BUDGET_USD = 1_000_000;
/** The largest token limit a budget may hold: a tree with no token limit names none. */
export const MAX_BUDGET_TOKENS = 1_000_000_000_000;

/** What a budget limits: tokens, and cost in integer micro-dollars (each optional). */
export interface BudgetLimits {
  maxTokens?: number;
  maxCostMicroUsd?: number;
}

/** What a run's tree may spend: tokens, and cost in integer micro-dollars (each optional). */
export interface Budget extends BudgetLimits {
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

/**
 * Why `value` is not a limit a budget may hold, or undefined when it is:
 * `max_tokens` a whole number from 1 to {@link MAX_BUDGET_TOKENS},
 * `max_cost_usd` from {@link MIN_BUDGET_USD} to {@link MAX_BUDGET_USD}.
 * The one range rule, for the engine and the HTTP body schemas alike.
 */
export function budgetLimitProblem(
  limit: 'max_tokens' | 'max_cost_usd',
  value: unknown,
): string | undefined {
  const got = `got ${JSON.stringify(value) ?? String(value)}`;
  if (limit === 'max_tokens')
    return Number.isInteger(value) &&
      (value as number) >= 1 &&
      (value as number) <= MAX_BUDGET_TOKENS
      ? undefined
      : `must be a whole number of tokens from 1 to ${MAX_BUDGET_TOKENS}, ${got}`;
  return typeof value === 'number' && value >= MIN_BUDGET_USD && value <= MAX_BUDGET_USD
    ? undefined
    : `must be from ${MIN_BUDGET_USD} (one micro-dollar) to ${MAX_BUDGET_USD} USD, ${got}`;
}

/** Throws a `UserError` naming `${field}.${limit}` unless `value` is absent or {@link budgetLimitProblem} finds none. */
function assertLimit(field: string, limit: 'max_tokens' | 'max_cost_usd', value: unknown): void {
  if (value === undefined) return;
  const problem = budgetLimitProblem(limit, value);
  if (problem !== undefined) throw new UserError(`${field}.${limit} ${problem}`);
}

/** The limits of a budget users gave, checked ({@link budgetLimitProblem}) and in micro-dollars; `field` names it in the error. */
export function budgetLimitsOf(
  option: Pick<BudgetOption, 'maxTokens' | 'maxCostUsd'>,
  field: string,
): BudgetLimits {
  const { maxTokens, maxCostUsd } = option;
  if (maxTokens === undefined && maxCostUsd === undefined)
    throw new UserError(`${field}: give max_tokens or max_cost_usd`);
  assertLimit(field, 'max_tokens', maxTokens);
  assertLimit(field, 'max_cost_usd', maxCostUsd);
  return {
    ...(maxTokens !== undefined && { maxTokens }),
    ...(maxCostUsd !== undefined && { maxCostMicroUsd: Math.round(maxCostUsd * 1_000_000) }),
  };
}

/** The budget a user gave, checked (limits in range, a whole decision timeout) and in micro-dollars; `field` names it in the error. */
export function budgetOf(option: BudgetOption | undefined, field: string): Budget | undefined {
  if (option === undefined) return undefined;
  const { decisionTimeoutMs } = option;
  const limits = budgetLimitsOf(option, field);
  if (decisionTimeoutMs !== undefined && !isDeadlineMs(decisionTimeoutMs))
    throw new UserError(
      `${field}.decision_timeout_ms must be a positive integer of milliseconds, at most ${MAX_DEADLINE_MS} (365 days), got ${String(decisionTimeoutMs)}`,
    );
  return {
    ...(limits.maxTokens !== undefined && { maxTokens: limits.maxTokens }),
    ...(decisionTimeoutMs !== undefined && { decisionTimeoutMs }),
    ...(limits.maxCostMicroUsd !== undefined && { maxCostMicroUsd: limits.maxCostMicroUsd }),
  };
}
