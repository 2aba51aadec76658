import { UserError } from '../errors.js';
import type { NewPendingAction, PendingActionRecord } from '../hitl/pending-action.js';
import { digestArgs } from '../hitl/pending-action.js';
import type { Usage } from '../messages.js';
import { usdOf } from './run-usage.js';
import { budgetOf, type Budget, type BudgetOption } from './budget-option.js';
import type { TenantBudgetActionArgs, TenantHold } from './tenant-budget.js';

export type { Budget, BudgetOption } from './budget-option.js';

/** What a budget pause's action shows: what the tree spent and the budget it hit. */
interface BudgetActionArgs {
  /** The run's own budget (its tree's), as against its tenant's day budget. */
  scope: 'run';
  spent: { tokens: number; cost_usd: number };
  budget: { max_tokens: number | null; max_cost_usd: number | null };
}

/** What any budget action shows: the tree's budget, or its tenant's day. */
export type AnyBudgetActionArgs = BudgetActionArgs | TenantBudgetActionArgs;

/**
 * What a run whose next model request is over budget (its tree's budget, or its tenant's day)
 * does: `fail` (a person rejected its budget action, or the action expired rejected: the `fail`
 * transition, `BudgetExceededError`, once that rejection is consumed) or `pause` (a new budget
 * action waits for a person to raise the budget or let the tree go on: the `pause` transition).
 * The lifecycle decides it (`budgetStopOf`, `lifecycle/budget-stop.ts`); the runner carries it out.
 */
export type BudgetStop =
  | {
      move: 'fail';
      /** The rejected budget action, consumed by the fail so that a later continue asks again. */
      actionId: string;
      /** The person's message with the rejection ('' without one). */
      message: string;
      /** Whose budget was spent: the run's tree's or its tenant's day. */
      scope: 'run' | 'tenant';
    }
  | { move: 'pause' };

/** The lifecycle's rule of a run over budget, from its tree's actions, as the runner is handed it. */
export type BudgetStopRule = (actions: readonly PendingActionRecord[]) => BudgetStop;

/** True for the action of a tenant's spent day (actions stored before scopes were named are the run's). */
export function isTenantBudgetAction(args: unknown): args is TenantBudgetActionArgs {
  return (args as { scope?: unknown } | null)?.scope === 'tenant';
}

/**
 * What a run's tree has spent and may spend, shared by the executions of one
 * tree in a worker (a team and the member runs it executes): every model
 * response adds to it, and each model request is checked against it first,
 * with no round trip.
 */
export class TreeSpend {
  /** The tenant's day budget the tree is held to too; undefined: none. */
  tenant: TenantHold | undefined;

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

  /** Adds one response's usage (its tokens and cost), to its tenant's day too. */
  add(tokens: number, microUsd: number): void {
    this.tokens += tokens;
    this.microUsd += microUsd;
    if (this.tenant) this.tenant.ledger.add(this.tenant.tenantId, microUsd);
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
      scope: 'run',
      spent: { tokens: this.tokens, cost_usd: usdOf(this.microUsd) },
      budget: {
        max_tokens: this.budget?.maxTokens ?? null,
        max_cost_usd:
          this.budget?.maxCostMicroUsd === undefined ? null : usdOf(this.budget.maxCostMicroUsd),
      },
    };
  }
}

/**
 * The pending action a run's budget pause waits on: a person raises the
 * budget or ends the run. With `expiresAt`, an undecided action is decided
 * as rejected then (like an approval's default `onTimeout`), which ends the
 * run in ERROR (`BudgetExceededError`) when it resumes.
 */
export function budgetAction(
  actionId: string,
  memberPath: string[],
  epoch: number,
  batch: number,
  args: AnyBudgetActionArgs,
  expiresAt: Date | null,
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
    onTimeout: 'reject',
    expiresAt,
  };
}

/**
 * The root's budget after an approval of a budget action: what was there,
 * with each limit the decision names replaced. Throws a {@link UserError}
 * (a 422) when a new limit is not above what the tree had spent.
 */
function raisedBudget(
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

/** What an approved budget action does to its tree's root: raises its budget, or exempts it from its tenant's spent day. */
export type BudgetApproval = { kind: 'raise'; budget: Budget } | { kind: 'exempt'; day: string };

/**
 * What approving budget action `action` does: the run's own budget is
 * raised ({@link raisedBudget}); a tenant's spent day is not raised by a
 * decision, the tree goes on past it for the rest of that UTC day. Throws a
 * {@link UserError} (a 422) for a raise not above what was spent, or a
 * `budget` on a tenant's action.
 */
export function budgetApproval(
  action: Pick<PendingActionRecord, 'actionId' | 'args'>,
  current: Budget | null,
  raise: BudgetOption | undefined,
): BudgetApproval {
  const { args } = action;
  if (!isTenantBudgetAction(args))
    return { kind: 'raise', budget: raisedBudget(action, current, raise ?? {}) };
  if (raise !== undefined)
    throw new UserError(
      `tenant ${args.tenant}'s day budget ($${args.budget.max_cost_usd}, CAIRN_TENANT_BUDGETS) is not raised by a decision: approve without a budget to let this run go on for the rest of ${args.day} (UTC)`,
    );
  return { kind: 'exempt', day: args.day };
}
