import { randomUUID } from 'node:crypto';
import { BudgetExceededError } from '../errors.js';
import { actionSummary } from '../hitl/pending-action.js';
import { budgetAction } from '../spend/budget.js';
import { costMicroUsd, priceFor } from '../spend/model-prices.js';
import { EXPECTED_OUTPUT_TOKENS } from '../capacity/token-estimate.js';
import { PauseSignal } from './pause-signal.js';
import type { Message } from '../messages.js';
import type { PendingActionRecord } from '../hitl/pending-action.js';
import type { TreeSpend } from '../spend/budget.js';
import type { ModelPrices } from '../spend/model-prices.js';
import type { Checkpointer } from './checkpointer.js';

/** What {@link checkBudget} reads of the turn loop's state. */
export interface BudgetCheckState {
  runId: string;
  epoch: number;
  model: { name: string };
  messages: readonly Message[];
  prices?: ModelPrices;
  spend?: TreeSpend;
  checkpointer: Pick<Checkpointer, 'pause'>;
  actions: {
    list(): Promise<PendingActionRecord[]>;
    consume(actionId: string): Promise<boolean>;
  };
  memberPath(): Promise<string[]>;
}

/**
 * Before a model request of about `tokens` tokens: when the request would
 * take the run's tree past its budget, the run stops here. A budget action
 * a person rejected ends it in ERROR (`BudgetExceededError`, the rejection
 * consumed so that a later continue asks again); otherwise it pauses with a
 * new budget action, committed with whatever is pending. Costs nothing when
 * the tree has room (no round trip: the spend is kept in memory).
 */
export async function checkBudget(state: BudgetCheckState, tokens: number): Promise<void> {
  const { spend } = state;
  if (!spend?.budget) return;
  const price = state.prices && priceFor(state.prices, state.model.name);
  const output = Math.min(tokens, EXPECTED_OUTPUT_TOKENS);
  const microUsd = costMicroUsd(price, { inputTokens: tokens - output, outputTokens: output });
  if (!spend.wouldExceed(tokens, microUsd)) return;

  const rejected = (await state.actions.list()).find(
    (a) =>
      a.kind === 'budget' &&
      a.status === 'decided' &&
      a.decision?.type === 'reject' &&
      a.consumedAt === null,
  );
  if (rejected && (await state.actions.consume(rejected.actionId))) {
    const message = rejected.decision?.type === 'reject' ? (rejected.decision.message ?? '') : '';
    throw new BudgetExceededError(state.runId, rejected.actionId, message);
  }
  const batch = state.messages.filter(
    (m) => m.role === 'assistant' && (m.toolCalls?.length ?? 0) > 0,
  ).length;
  const action = budgetAction(
    `act_${randomUUID()}`,
    await state.memberPath(),
    state.epoch,
    batch,
    spend.actionArgs(),
  );
  state.checkpointer.pause([action]);
  throw new PauseSignal(state.runId, { actions: [actionSummary(action)] });
}
