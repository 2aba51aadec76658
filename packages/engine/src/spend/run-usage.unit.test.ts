import { describe, expect, it } from 'vitest';
import type { Usage } from '../messages.js';
import { costMicroUsd, parseModelPrices, priceFor } from './model-prices.js';
import { addResponseUsage, sumUsage, usageView } from './run-usage.js';

const PRICES = parseModelPrices(
  JSON.stringify({
    'openai-chat:gpt-x': {
      input_per_mtok: 1.25,
      cached_input_per_mtok: 0.125,
      output_per_mtok: 10,
    },
    'openai:*': { input_per_mtok: 2, output_per_mtok: 8 },
  }),
  'CAIRN_MODEL_PRICES',
);
const NONE: Usage = { inputTokens: 0, outputTokens: 0, totalTokens: 0 };

describe('usage and cost of a run', () => {
  it('keeps each response by model and costs it in integer micro-dollars at its price', () => {
    let usage = addResponseUsage(
      NONE,
      'openai-chat:gpt-x',
      { inputTokens: 1000, cachedInputTokens: 400, outputTokens: 200, totalTokens: 1200 },
      PRICES,
    );
    usage = addResponseUsage(
      usage,
      'openai:gpt-5.4',
      { inputTokens: 100, outputTokens: 50, totalTokens: 150 },
      PRICES,
    );
    usage = addResponseUsage(
      usage,
      'local:llama',
      { inputTokens: 7, outputTokens: 3, totalTokens: 10 },
      PRICES,
    );
    // 600 × 1.25 + 400 × 0.125 + 200 × 10 = 2,800 micro-dollars; 100 × 2 + 50 × 8 = 600; no price: 0.
    expect(usage.byModel).toEqual({
      'openai-chat:gpt-x': {
        inputTokens: 1000,
        cachedInputTokens: 400,
        outputTokens: 200,
        costMicroUsd: 2800,
      },
      'openai:gpt-5.4': {
        inputTokens: 100,
        cachedInputTokens: 0,
        outputTokens: 50,
        costMicroUsd: 600,
      },
      'local:llama': { inputTokens: 7, cachedInputTokens: 0, outputTokens: 3, costMicroUsd: 0 },
    });
    expect(usage).toMatchObject({
      inputTokens: 1107,
      cachedInputTokens: 400,
      outputTokens: 253,
      totalTokens: 1360,
      costMicroUsd: 3400,
    });
    expect(usageView(usage)).toMatchObject({
      input_tokens: 1107,
      cached_input_tokens: 400,
      output_tokens: 253,
      total_tokens: 1360,
      cost_usd: 0.0034,
      by_model: { 'openai-chat:gpt-x': { cost_usd: 0.0028, cached_input_tokens: 400 } },
    });
    // A response that reports no usage adds nothing.
    expect(addResponseUsage(usage, 'openai:gpt-5.4', undefined, PRICES)).toBe(usage);
  });

  it('sums a tree, by model too, and reads rows stored before costs were kept', () => {
    const old: Usage = { inputTokens: 5, outputTokens: 5, totalTokens: 10 };
    const member = addResponseUsage(
      NONE,
      'openai:o4',
      { inputTokens: 10, outputTokens: 10, totalTokens: 20 },
      PRICES,
    );
    const total = usageView(sumUsage([old, member, member]));
    expect(total).toMatchObject({ total_tokens: 50, cost_usd: 0.0002 });
    expect(total.by_model['openai:o4']).toEqual({
      input_tokens: 20,
      cached_input_tokens: 0,
      output_tokens: 20,
      cost_usd: 0.0002,
    });
    expect(usageView(old)).toEqual({
      input_tokens: 5,
      cached_input_tokens: 0,
      output_tokens: 5,
      total_tokens: 10,
      cost_usd: 0,
      by_model: {},
    });
  });

  it('prices a model by its exact entry, else its longest prefix*, the cached price defaulting to the input price', () => {
    expect(priceFor(PRICES, 'openai:gpt-5.4')).toEqual({
      inputPerMtok: 2,
      cachedInputPerMtok: 2,
      outputPerMtok: 8,
    });
    expect(priceFor(PRICES, 'openai-chat:other')).toBeUndefined();
    expect(costMicroUsd(undefined, { inputTokens: 10, outputTokens: 10 })).toBe(0);
  });

  it('refuses a price table that does not parse, naming the model and the field', () => {
    expect(() =>
      parseModelPrices('{"a": {"input_per_mtok": -1, "output_per_mtok": 1}}', 'P'),
    ).toThrow(/^P: "a": input_per_mtok: /);
    expect(() => parseModelPrices('{"a": {"input_per_mtok": 1}}', 'P')).toThrow(
      /^P: "a": output_per_mtok: /,
    );
    expect(() =>
      parseModelPrices('{"a": {"input_per_mtok": 1, "output_per_mtok": 1, "out": 2}}', 'P'),
    ).toThrow(/^P: "a": out: /);
    expect(() => parseModelPrices('[1]', 'P')).toThrow(/^P: expected a JSON object/);
    expect(() => parseModelPrices('{', 'P')).toThrow(/^P: not JSON/);
  });
});
