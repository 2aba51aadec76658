import type { ModelUsage, Usage } from '../messages.js';
import { costMicroUsd, priceFor, type ModelPrices } from './model-prices.js';

/**
 * A run's usage after one more model response: the token counts, the
 * response's model's line in `byModel`, and the cost at `prices`. A
 * response that reported no usage adds nothing (the provider did not say).
 */
export function addResponseUsage(
  run: Usage,
  model: string,
  response: Usage | undefined,
  prices: ModelPrices | undefined,
): Usage {
  if (!response) return run;
  const cached = response.cachedInputTokens ?? 0;
  const cost = costMicroUsd(prices && priceFor(prices, model), response);
  const line = run.byModel?.[model] ?? EMPTY_MODEL_USAGE;
  return {
    inputTokens: run.inputTokens + response.inputTokens,
    outputTokens: run.outputTokens + response.outputTokens,
    totalTokens: run.totalTokens + response.totalTokens,
    cachedInputTokens: (run.cachedInputTokens ?? 0) + cached,
    costMicroUsd: (run.costMicroUsd ?? 0) + cost,
    byModel: {
      ...run.byModel,
      [model]: {
        inputTokens: line.inputTokens + response.inputTokens,
        cachedInputTokens: line.cachedInputTokens + cached,
        outputTokens: line.outputTokens + response.outputTokens,
        costMicroUsd: line.costMicroUsd + cost,
      },
    },
  };
}

const EMPTY_MODEL_USAGE: ModelUsage = {
  inputTokens: 0,
  cachedInputTokens: 0,
  outputTokens: 0,
  costMicroUsd: 0,
};

/** One model's usage as the API shows it. */
export interface ModelUsageView {
  input_tokens: number;
  cached_input_tokens: number;
  output_tokens: number;
  /** USD, from the integer micro-dollars kept. */
  cost_usd: number;
}

/** A run's usage (or its tree's) as the API shows it. */
export interface UsageView extends ModelUsageView {
  total_tokens: number;
  by_model: Record<string, ModelUsageView>;
}

/** A stored usage (any age: rows written before costs were kept lack them) as the API shows it. */
export function usageView(usage: Usage): UsageView {
  const byModel: Record<string, ModelUsageView> = {};
  for (const [model, line] of Object.entries(usage.byModel ?? {})) {
    byModel[model] = {
      input_tokens: line.inputTokens,
      cached_input_tokens: line.cachedInputTokens,
      output_tokens: line.outputTokens,
      cost_usd: usdOf(line.costMicroUsd),
    };
  }
  return {
    input_tokens: usage.inputTokens ?? 0,
    cached_input_tokens: usage.cachedInputTokens ?? 0,
    output_tokens: usage.outputTokens ?? 0,
    total_tokens: usage.totalTokens ?? 0,
    cost_usd: usdOf(usage.costMicroUsd ?? 0),
    by_model: byModel,
  };
}

/** Sums usages (a team's tree), by model too. */
export function sumUsage(usages: readonly Usage[]): Usage {
  const total: Usage = {
    inputTokens: 0,
    outputTokens: 0,
    totalTokens: 0,
    cachedInputTokens: 0,
    costMicroUsd: 0,
    byModel: {},
  };
  for (const usage of usages) {
    total.inputTokens += usage.inputTokens ?? 0;
    total.outputTokens += usage.outputTokens ?? 0;
    total.totalTokens += usage.totalTokens ?? 0;
    total.cachedInputTokens! += usage.cachedInputTokens ?? 0;
    total.costMicroUsd! += usage.costMicroUsd ?? 0;
    for (const [model, line] of Object.entries(usage.byModel ?? {})) {
      const sum = (total.byModel![model] ??= { ...EMPTY_MODEL_USAGE });
      sum.inputTokens += line.inputTokens;
      sum.cachedInputTokens += line.cachedInputTokens;
      sum.outputTokens += line.outputTokens;
      sum.costMicroUsd += line.costMicroUsd;
    }
  }
  return total;
}

/** Micro-dollars as USD (exact to the micro-dollar). */
export function usdOf(microUsd: number): number {
  return Math.round(microUsd) / 1_000_000;
}
