import { costMicroUsd, type ModelPrice, type Usage } from '@cairn/engine';
import type { RunView } from '@cairn/store';
import type { EstimatedResponse } from './estimating-model.js';

/** One limit of a paused run: how far past it the run's tree spent, and how far the bound lets it. */
export interface LimitOvershoot {
  /** Spent minus the limit (at or below 0: the run stayed within it). */
  overshoot: number;
  /** The last committed response's actual spend minus the estimate its request was checked with. */
  bound: number;
}

/** What a run that paused for its budget spent past it, in tokens and in micro-dollars. */
export interface BudgetOvershoot {
  runId: string;
  /** Model responses committed before the pause. */
  responses: number;
  /** Null when the run paused before its first response (nothing spent, no bound to hold it to). */
  tokens: LimitOvershoot | null;
  microUsd: LimitOvershoot | null;
}

/**
 * A paused run's overshoot of each limit of its budget, against the bound
 * the budget check promises: its last committed response's actual cost
 * minus that request's estimate. `responses` are the ones this run's model
 * recorded (matched by the run's input); every one of them must be in the
 * run's committed history, and their usage must add up to the run's.
 */
export function budgetOvershoot(
  view: RunView,
  responses: readonly EstimatedResponse[],
  price: ModelPrice | undefined,
): BudgetOvershoot {
  const mine = responses.filter((r) => r.input === view.input);
  const assistantAt = view.messages.flatMap((m, i) => (m.role === 'assistant' ? [i] : []));
  if (mine.length !== assistantAt.length)
    throw new Error(
      `run ${view.run_id}: ${mine.length} responses, ${assistantAt.length} committed assistant messages`,
    );
  const recorded = mine.reduce((sum, r) => sum + (r.usage?.totalTokens ?? 0), 0);
  if (recorded !== view.usage_total.total_tokens)
    throw new Error(
      `run ${view.run_id}: responses used ${recorded} tokens, the run view says ${view.usage_total.total_tokens}`,
    );
  const budget = view.budget;
  if (!budget) throw new Error(`run ${view.run_id} has no budget`);
  const lastIndex = assistantAt.at(-1);
  const last = mine.find((r) => r.messageIndex === lastIndex);
  if (lastIndex !== undefined && !last)
    throw new Error(`run ${view.run_id}: no recorded response at message ${lastIndex}`);
  const spentMicroUsd = Math.round(view.usage_total.cost_usd * 1_000_000);
  const limit = (spent: number, max: number | null, actual: number, estimated: number) =>
    max === null || !last ? null : { overshoot: spent - max, bound: actual - estimated };
  const usage: Usage = last?.usage ?? { inputTokens: 0, outputTokens: 0, totalTokens: 0 };
  return {
    runId: view.run_id,
    responses: mine.length,
    tokens: limit(
      view.usage_total.total_tokens,
      budget.max_tokens,
      usage.totalTokens,
      last?.estimate.tokens ?? 0,
    ),
    microUsd: limit(
      spentMicroUsd,
      budget.max_cost_usd === null ? null : Math.round(budget.max_cost_usd * 1_000_000),
      costMicroUsd(price, usage),
      last?.estimate.microUsd ?? 0,
    ),
  };
}
