import { z } from 'zod';
import { UserError } from '../errors.js';
import { issueField, settingValue } from '../settings-json.js';
import type { CapacityLimit } from './model-capacity.js';

/** One entry of `CAIRN_MODEL_LIMITS` or a registry's `modelLimits`. */
export interface ModelLimit extends CapacityLimit {
  /** A `Model.name`, or a prefix ending in `*` (`openai-chat:*`). */
  model: string;
}

const positiveInt = z.number().int().positive();

const MODEL_LIMIT_SCHEMA = z
  .object({
    model: z.string().min(1),
    concurrency: positiveInt.optional(),
    requests_per_minute: positiveInt.optional(),
    tokens_per_minute: positiveInt.optional(),
  })
  .strict();

/**
 * Parses model limits as `CAIRN_MODEL_LIMITS` (a JSON string) or a registry's
 * `modelLimits` (an array) give them; throws a {@link UserError} naming the
 * source, the entry and the field of the first thing wrong.
 */
export function parseModelLimits(value: unknown, source: string): ModelLimit[] {
  const raw = settingValue(value, source);
  if (!Array.isArray(raw)) throw new UserError(`${source}: expected a JSON array of limits`);
  const seen = new Set<string>();
  return raw.map((entry, index) => {
    const name =
      typeof (entry as { model?: unknown })?.model === 'string'
        ? ` (${(entry as { model: string }).model})`
        : '';
    const parsed = MODEL_LIMIT_SCHEMA.safeParse(entry);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      throw new UserError(
        `${source}: entry ${index}${name}: ${issueField(issue)}: ${issue.message}`,
      );
    }
    const { model, concurrency, requests_per_minute, tokens_per_minute } = parsed.data;
    if (model.includes('*') && !/^[^*]*\*$/.test(model))
      throw new UserError(`${source}: entry ${index}${name}: model: a '*' may only end a prefix`);
    if (seen.has(model))
      throw new UserError(`${source}: entry ${index}${name}: model: listed twice`);
    seen.add(model);
    return {
      model,
      ...(concurrency !== undefined && { concurrency }),
      ...(requests_per_minute !== undefined && { requestsPerMinute: requests_per_minute }),
      ...(tokens_per_minute !== undefined && { tokensPerMinute: tokens_per_minute }),
    };
  });
}

/** The registry's limits with the environment's over them: an entry of `fromEnv` replaces the registry's for the same `model`. */
export function mergeModelLimits(
  fromRegistry: readonly ModelLimit[],
  fromEnv: readonly ModelLimit[],
): ModelLimit[] {
  const byModel = new Map(fromRegistry.map((limit) => [limit.model, limit]));
  for (const limit of fromEnv) byModel.set(limit.model, limit);
  return [...byModel.values()];
}

/** The limit that governs `modelName`: its exact entry, else the longest matching `prefix*`. */
export function limitFor(
  limits: readonly ModelLimit[],
  modelName: string,
): CapacityLimit | undefined {
  let best: ModelLimit | undefined;
  for (const limit of limits) {
    if (limit.model === modelName) return limit;
    if (!limit.model.endsWith('*')) continue;
    const prefix = limit.model.slice(0, -1);
    if (modelName.startsWith(prefix) && (!best || prefix.length > best.model.length - 1))
      best = limit;
  }
  return best;
}
