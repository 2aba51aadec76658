import type { Clock } from '../engine-resources.js';
import { randomUUID } from 'node:crypto';
import { BudgetExceededError, StoreUnavailableError } from '../errors.js';
import { actionSummary } from '../hitl/pending-action.js';
import { budgetAction, type AnyBudgetActionArgs } from '../spend/budget.js';
import { spentTenantDay } from '../spend/tenant-budget.js';
import { priceFor } from '../spend/model-prices.js';
import { estimateRequestSpend } from '../spend/request-estimate.js';
import { PauseSignal } from './pause-signal.js';
import type { Message } from '../messages.js';
import type { ModelRequest } from '../model.js';
import type { PendingActionRecord } from '../hitl/pending-action.js';
import type { BudgetStopRule, TreeSpend } from '../spend/budget.js';
import type { ModelPrices } from '../spend/model-prices.js';
import type { Checkpointer } from './checkpointer.js';

/** What {@link checkBudget} reads of the turn loop's state. */
export interface BudgetCheckState {
  runId: string;
  /** Where a budget action's expiry is read from. */
  clock: Clock;
  epoch: number;
  model: { name: string };
  messages: readonly Message[];
  prices?: ModelPrices;
  spend?: TreeSpend;
  /** Whether a run over budget fails or pauses: the lifecycle's `budgetStopOf`. */
  budgetStop: BudgetStopRule;
  checkpointer: Pick<Checkpointer, 'pause'>;
  actions: {
    list(): Promise<PendingActionRecord[]>;
    consume(actionId: string): Promise<boolean>;
  };
  memberPath(): Promise<string[]>;
}

/**
 * Before a model request (estimated by {@link estimateRequestSpend} only for
 * a run with a budget: it reads the whole prompt): when the request would take the
 * run's tree past its budget, or its tenant's day budget is spent
 * (and no person let the tree go on for that day), the run stops here, as
 * the lifecycle's rule decides (`budgetStop`, `lifecycle/budget-stop.ts`): a
 * budget action a person rejected ends it in ERROR (`BudgetExceededError`,
 * the rejection consumed so that a later continue asks again); otherwise it
 * pauses with a new budget action, committed with whatever is pending. Costs
 * no round trip when there is room: the tree's spend is kept in memory, the
 * tenant's day in the worker's ledger (read again every few seconds).
 */
export async function checkBudget(
  state: BudgetCheckState,
  request: Pick<ModelRequest, 'instructions' | 'messages' | 'tools'>,
): Promise<void> {
  const args = await overBudget(state, request);
  if (!args) return;

  const stop = state.budgetStop(await state.actions.list());
  // The rejection is consumed once: an execution that lost that race pauses instead.
  if (stop.move === 'fail' && (await state.actions.consume(stop.actionId)))
    throw new BudgetExceededError(state.runId, stop.actionId, stop.message, stop.scope);
  const batch = state.messages.filter(
    (m) => m.role === 'assistant' && (m.toolCalls?.length ?? 0) > 0,
  ).length;
  const timeoutMs = state.spend?.budget?.decisionTimeoutMs;
  const action = budgetAction(
    `act_${randomUUID()}`,
    await state.memberPath(),
    state.epoch,
    batch,
    args,
    timeoutMs === undefined ? null : new Date(state.clock.now().getTime() + timeoutMs),
  );
  state.checkpointer.pause([action]);
  throw new PauseSignal(state.runId, { actions: [actionSummary(action)] });
}

/** What the budget action shows when the request may not go out: the tree's budget first, then its tenant's day. */
async function overBudget(
  state: BudgetCheckState,
  request: Pick<ModelRequest, 'instructions' | 'messages' | 'tools'>,
): Promise<AnyBudgetActionArgs | undefined> {
  const { spend } = state;
  if (!spend) return undefined;
  if (spend.budget) {
    // The estimate reads the whole prompt: only a run with a budget pays for it.
    const price = state.prices && priceFor(state.prices, state.model.name);
    const estimate = estimateRequestSpend(request, price);
    if (spend.wouldExceed(estimate.tokens, estimate.microUsd)) return spend.actionArgs();
  }
  if (!spend.tenant) return undefined;
  try {
    return await spentTenantDay(spend.tenant);
  } catch (cause) {
    // The tenant's day could not be read: the job is retried from the last checkpoint.
    throw new StoreUnavailableError(state.runId, { cause });
  }
}
