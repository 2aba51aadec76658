import { UserError } from '../errors.js';
import type { NewPendingAction, PendingActionRecord } from '../hitl/pending-action.js';
import { digestArgs } from '../hitl/pending-action.js';
import type { Usage } from '../messages.js';
import { usdOf } from './run-usage.js';
import { budgetOf, type Budget, type BudgetOption } from './budget-option.js';

export { budgetOf, type Budget, type BudgetOption } from './budget-option.js';

/** What a budget pause's action shows: what the tree spent and the budget it hit. */
export interface BudgetActionArgs {
  spent: { tokens: number; cost_usd: number };
  budget: { max_tokens: number | null; max_cost_usd: number | null };
}

/**
 * What a run's tree has spent and may spend, shared by the executions of one
 * tree in a worker (a team and the member runs it executes): every model
 * response adds to it, and each model request is checked against it first,
 * with no round trip.
 */
export class TreeSpend {
  constructor(
    /** The root run's budget; undefined: none (nothing is checked). */
    public budget: Budget | undefined,
    private tokens: number,
    private microUsd: number,
  ) {}

  /** A tree whose committed usage is `usage` (its runs summed). */
  static of(budget: Budget | undefined, usage: Usage): TreeSpend {
    return new TreeSpend(budget, usage.totalTokens ?? 0, usage.costMicroUsd ?? 0);
  }

  /** Adds one response's usage (its tokens and cost). */
  add(tokens: number, microUsd: number): void {
    this.tokens += tokens;
    this.microUsd += microUsd;
  }

  /** True when a request of about `tokens` tokens and `microUsd` would take the tree past its budget. */
  wouldExceed(tokens: number, microUsd: number): boolean {
    const { budget } = this;
    if (!budget) return false;
    return (
      (budget.maxTokens !== undefined && this.tokens + tokens > budget.maxTokens) ||
      (budget.maxCostMicroUsd !== undefined && this.microUsd + microUsd > budget.maxCostMicroUsd)
    );
  }

  /** What a budget action shows. */
  actionArgs(): BudgetActionArgs {
    return {
      spent: { tokens: this.tokens, cost_usd: usdOf(this.microUsd) },
      budget: {
        max_tokens: this.budget?.maxTokens ?? null,
        max_cost_usd:
          this.budget?.maxCostMicroUsd === undefined ? null : usdOf(this.budget.maxCostMicroUsd),
      },
    };
  }
}

/** The pending action a run's budget pause waits on: a person raises the budget or ends the run. */
export function budgetAction(
  actionId: string,
  memberPath: string[],
  epoch: number,
  batch: number,
  args: BudgetActionArgs,
): NewPendingAction {
  return {
    actionId,
    kind: 'budget',
    memberPath,
    // One budget pause per execution at most: the epoch names it among the run's actions.
    toolCallId: `budget:${epoch}`,
    tool: 'budget',
    args,
    argsDigest: digestArgs(args),
    argsSchema: null,
    batch,
    onTimeout: 'error',
    expiresAt: null,
  };
}

/**
 * The root's budget after an approval of a budget action: what was there,
 * with each limit the decision names replaced. Throws a {@link UserError}
 * (a 422) when a new limit is not above what the tree had spent.
 */
export function raisedBudget(
  action: Pick<PendingActionRecord, 'actionId' | 'args'>,
  current: Budget | null,
  raise: BudgetOption,
): Budget {
  const spent = (action.args as BudgetActionArgs).spent;
  const asked = budgetOf(raise, 'budget') ?? {};
  if (asked.maxTokens !== undefined && asked.maxTokens <= spent.tokens)
    throw new UserError(
      `budget.max_tokens (${asked.maxTokens}) must be above what the run spent (${spent.tokens} tokens)`,
    );
  if (
    asked.maxCostMicroUsd !== undefined &&
    asked.maxCostMicroUsd <= Math.round(spent.cost_usd * 1_000_000)
  )
    throw new UserError(
      `budget.max_cost_usd (${usdOf(asked.maxCostMicroUsd)}) must be above what the run spent ($${spent.cost_usd})`,
    );
  return { ...current, ...asked };
}
