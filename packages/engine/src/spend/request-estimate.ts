import { EXPECTED_OUTPUT_TOKENS, estimateTokens } from '../capacity/token-estimate.js';
import type { ModelRequest } from '../model.js';
import { costMicroUsd, type ModelPrice } from './model-prices.js';

/** What a model request is expected to spend before its response's usage is known. */
export interface RequestEstimate {
  tokens: number;
  /** Integer micro-dollars (0 for a model with no price). */
  microUsd: number;
}

/**
 * A model request's expected spend, as a run's budget check counts it before
 * the request goes out: its tokens by {@link estimateTokens}, of which up to
 * {@link EXPECTED_OUTPUT_TOKENS} are output and the rest input, at `price`.
 * The response's actual usage may be above it: that difference is what a
 * run can spend past its budget.
 */
export function estimateRequestSpend(
  request: Pick<ModelRequest, 'instructions' | 'messages' | 'tools'>,
  price: ModelPrice | undefined,
): RequestEstimate {
  const tokens = estimateTokens(request);
  const output = Math.min(tokens, EXPECTED_OUTPUT_TOKENS);
  return {
    tokens,
    microUsd: costMicroUsd(price, { inputTokens: tokens - output, outputTokens: output }),
  };
}
