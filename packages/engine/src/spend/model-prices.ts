import { z } from 'zod';
import { UserError } from '../errors.js';
import { issueField, settingValue } from '../settings-json.js';

/** A model's prices in USD per million tokens. */
export interface ModelPrice {
  inputPerMtok: number;
  /** @defaultValue the input price */
  cachedInputPerMtok: number;
  outputPerMtok: number;
}

/** Prices by model: a `Model.name`, or a prefix ending in `*`. */
export type ModelPrices = ReadonlyMap<string, ModelPrice>;

const price = z.number().finite().nonnegative();
const PRICE_SCHEMA = z
  .object({
    input_per_mtok: price,
    cached_input_per_mtok: price.optional(),
    output_per_mtok: price,
  })
  .strict();

/**
 * Parses prices as `CAIRN_MODEL_PRICES` (a JSON string) or a registry's
 * `modelPrices` (an object) give them: `{ "openai-chat:gpt-x": {
 * "input_per_mtok": 1.25, "cached_input_per_mtok": 0.125, "output_per_mtok": 10 } }`.
 * Throws a {@link UserError} naming the source, the model and the field.
 */
export function parseModelPrices(value: unknown, source: string): ModelPrices {
  const raw = settingValue(value, source);
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
    throw new UserError(`${source}: expected a JSON object of prices by model`);
  const prices = new Map<string, ModelPrice>();
  for (const [model, entry] of Object.entries(raw)) {
    if (model.includes('*') && !/^[^*]*\*$/.test(model))
      throw new UserError(`${source}: "${model}": a '*' may only end a prefix`);
    const parsed = PRICE_SCHEMA.safeParse(entry);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      throw new UserError(`${source}: "${model}": ${issueField(issue)}: ${issue.message}`);
    }
    const { input_per_mtok, cached_input_per_mtok, output_per_mtok } = parsed.data;
    prices.set(model, {
      inputPerMtok: input_per_mtok,
      cachedInputPerMtok: cached_input_per_mtok ?? input_per_mtok,
      outputPerMtok: output_per_mtok,
    });
  }
  return prices;
}

/** The registry's prices with the environment's over them (per model). */
export function mergeModelPrices(fromRegistry: ModelPrices, fromEnv: ModelPrices): ModelPrices {
  return new Map([...fromRegistry, ...fromEnv]);
}

/** The price of `modelName`: its exact entry, else the longest matching `prefix*`. */
export function priceFor(prices: ModelPrices, modelName: string): ModelPrice | undefined {
  const exact = prices.get(modelName);
  if (exact) return exact;
  let best: [string, ModelPrice] | undefined;
  for (const [key, price] of prices) {
    if (!key.endsWith('*')) continue;
    const prefix = key.slice(0, -1);
    if (modelName.startsWith(prefix) && (!best || prefix.length > best[0].length))
      best = [prefix, price];
  }
  return best?.[1];
}

/**
 * A response's cost in integer micro-dollars: uncached input, cached input
 * and output tokens at their prices (a price per million tokens is a price
 * in micro-dollars per token).
 */
export function costMicroUsd(
  price: ModelPrice | undefined,
  usage: { inputTokens: number; cachedInputTokens?: number; outputTokens: number },
): number {
  if (!price) return 0;
  const cached = Math.min(usage.cachedInputTokens ?? 0, usage.inputTokens);
  return Math.round(
    (usage.inputTokens - cached) * price.inputPerMtok +
      cached * price.cachedInputPerMtok +
      usage.outputTokens * price.outputPerMtok,
  );
}
