import { sql, type RawBuilder } from 'kysely';
import type { ModelUsage, Usage } from '@cairn/engine';

/**
 * A model's part of a run's usage as `runs.usage` stores it:
 * `[inputTokens, cachedInputTokens, outputTokens, costMicroUsd]`.
 */
export type StoredModelUsage = [number, number, number, number];

/**
 * A run's usage as `runs.usage` (`json`) stores it, positional so that every
 * checkpoint's update of the row rewrites tens of bytes rather than a keyed
 * object of hundreds (docs/operations.md, "Storage"):
 * `[inputTokens, outputTokens, totalTokens, cachedInputTokens, costMicroUsd, byModel]`,
 * `byModel` keyed by model name. An absent optional field is `null`, and
 * trailing nulls are left out.
 */
export type StoredUsage = [
  number,
  number,
  number,
  (number | null)?,
  (number | null)?,
  (Record<string, StoredModelUsage> | null)?,
];

/** The position of `costMicroUsd` in a {@link StoredUsage}. */
const COST = 4;
/** The position of `byModel` in a {@link StoredUsage}. */
const BY_MODEL = 5;
/** The position of `costMicroUsd` in a {@link StoredModelUsage}. */
const MODEL_COST = 3;

/** `usage` as the JSON text `runs.usage` stores. */
export function storedUsageJson(usage: Usage): string {
  const byModel =
    usage.byModel &&
    Object.fromEntries(
      Object.entries(usage.byModel).map(([model, m]): [string, StoredModelUsage] => [
        model,
        [m.inputTokens, m.cachedInputTokens, m.outputTokens, m.costMicroUsd],
      ]),
    );
  const stored: (number | Record<string, StoredModelUsage> | null)[] = [
    usage.inputTokens,
    usage.outputTokens,
    usage.totalTokens,
    usage.cachedInputTokens ?? null,
    usage.costMicroUsd ?? null,
    byModel ?? null,
  ];
  while (stored.at(-1) === null) stored.pop();
  return JSON.stringify(stored);
}

/** The run's usage from what `runs.usage` stores. */
export function usageOfStored(stored: StoredUsage): Usage {
  const [inputTokens, outputTokens, totalTokens, cached, cost, byModel] = stored;
  return {
    inputTokens,
    outputTokens,
    totalTokens,
    ...(cached != null && { cachedInputTokens: cached }),
    ...(cost != null && { costMicroUsd: cost }),
    ...(byModel != null && {
      byModel: Object.fromEntries(
        Object.entries(byModel).map(([model, m]): [string, ModelUsage] => [
          model,
          { inputTokens: m[0], cachedInputTokens: m[1], outputTokens: m[2], costMicroUsd: m[3] },
        ]),
      ),
    }),
  };
}

/** SQL: the cost in micro-dollars of the stored usage `usage` (a `json` expression), 0 when it has none. */
export function storedUsageCost(usage: RawBuilder<unknown>): RawBuilder<bigint> {
  return sql`coalesce((${usage}->>${sql.lit(COST)})::numeric, 0)::bigint`;
}

/** SQL: the per-model object of the stored usage `usage` (`json`), `{}` when it has none. */
export function storedUsageByModel(usage: RawBuilder<unknown>): RawBuilder<unknown> {
  const byModel = sql`${usage}->${sql.lit(BY_MODEL)}`;
  return sql`(case when json_typeof(${byModel}) = 'object' then ${byModel} else '{}'::json end)`;
}

/** SQL: the cost in micro-dollars of one model's entry `entry` (`json`) of a stored usage's `byModel`. */
export function storedModelCost(entry: RawBuilder<unknown>): RawBuilder<bigint> {
  return sql`coalesce((${entry}->>${sql.lit(MODEL_COST)})::numeric, 0)::bigint`;
}
