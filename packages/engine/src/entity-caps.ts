import { isDeadlineMs, MAX_DEADLINE_MS } from './deadline-ms.js';
import type { EntityKind } from './run-types.js';
import { CapExceededError, UserError } from './errors.js';
import {
  budgetLimitsOf,
  type Budget,
  type BudgetLimits,
  type BudgetOption,
} from './spend/budget-option.js';
import { usdOf } from './spend/run-usage.js';

/**
 * An agent's or team's caps, as its definition gives them: what a request may
 * not exceed (a create, a fork, a continue's new deadline, a tenant key's
 * budget raise), where its `budget` and `maxDurationMs` are only the defaults
 * of a request that names none.
 */
export interface EntityCapsOption {
  /**
   * The largest budget a run may ask for (tokens, USD). A run gets the limits it asks for, else the
   * entity's `budget`, with each limit the cap sets and they lack filled in from the cap: a run of a
   * capped entity is never unbounded. @defaultValue no cap
   */
  budget?: Pick<BudgetOption, 'maxTokens' | 'maxCostUsd'>;
  /**
   * The longest deadline a request may give (`deadline_ms`), in ms. A run that names none gets the
   * entity's `maxDurationMs`, else this. @defaultValue no cap
   */
  maxDurationMs?: number;
}

/** An entity's caps, checked, its cost in micro-dollars (as workers announce them). */
export interface EntityCaps {
  budget?: BudgetLimits;
  maxDurationMs?: number;
}

/** An entity's defaults, the limits of a request that names none (its `budget`, `maxDurationMs`). */
interface CappedDefaults {
  budget?: Budget;
  maxDurationMs?: number;
}

/** An entity as its caps are checked (the catalog's description of it is one). */
export interface CappedEntity {
  kind: EntityKind;
  name: string;
  caps?: EntityCaps;
}

/**
 * The caps an entity's definition gives, checked (each in range, its defaults
 * not above them); `owner` (`agent "x"`) names it in the error. Undefined: none.
 */
export function capsOf(
  option: EntityCapsOption | undefined,
  owner: string,
  defaults: CappedDefaults,
): EntityCaps | undefined {
  if (option === undefined) return undefined;
  if (option.budget !== undefined && 'decisionTimeoutMs' in option.budget)
    throw new UserError(
      `${owner}: caps.budget caps tokens and cost only; give decisionTimeoutMs in budget`,
    );
  const budget =
    option.budget === undefined
      ? undefined
      : budgetLimitsOf(option.budget, `${owner}: caps.budget`);
  if (option.maxDurationMs !== undefined && !isDeadlineMs(option.maxDurationMs))
    throw new UserError(
      `${owner}: caps.maxDurationMs must be a positive integer number of milliseconds, at most ${MAX_DEADLINE_MS} (365 days)`,
    );
  const caps: EntityCaps = {
    ...(budget !== undefined && { budget }),
    ...(option.maxDurationMs !== undefined && { maxDurationMs: option.maxDurationMs }),
  };
  const over = overCap(caps, {
    ...(defaults.budget !== undefined && { budget: defaults.budget }),
    ...(defaults.maxDurationMs !== undefined && { deadlineMs: defaults.maxDurationMs }),
  });
  if (over)
    throw new UserError(
      `${owner}: ${CAPPED[over.limit].option} (${over.value}) is above ${CAPPED[over.limit].cap} (${over.capValue}): a default must fit under its cap`,
    );
  return caps;
}

/** What a request asks for that caps bound: budget limits (micro-dollars) and a deadline. */
export interface CappedRequest {
  budget?: BudgetLimits;
  deadlineMs?: number;
}

/** Each capped limit: the request's field, the entity's default option, and its cap option. */
const CAPPED = {
  maxTokens: {
    field: 'budget.max_tokens',
    option: 'budget.maxTokens',
    cap: 'caps.budget.maxTokens',
  },
  maxCostUsd: {
    field: 'budget.max_cost_usd',
    option: 'budget.maxCostUsd',
    cap: 'caps.budget.maxCostUsd',
  },
  maxDurationMs: { field: 'deadline_ms', option: 'maxDurationMs', cap: 'caps.maxDurationMs' },
} as const;

/** The first of `request`'s limits above `caps` (costs in USD); undefined: none. */
function overCap(
  caps: EntityCaps | undefined,
  request: CappedRequest,
): { limit: keyof typeof CAPPED; value: number; capValue: number } | undefined {
  const asked = request.budget;
  const capped = caps?.budget;
  const limits = [
    { limit: 'maxTokens', value: asked?.maxTokens, capValue: capped?.maxTokens },
    { limit: 'maxCostUsd', value: asked?.maxCostMicroUsd, capValue: capped?.maxCostMicroUsd },
    { limit: 'maxDurationMs', value: request.deadlineMs, capValue: caps?.maxDurationMs },
  ] as const;
  for (const { limit, value, capValue } of limits) {
    if (value === undefined || capValue === undefined || value <= capValue) continue;
    // Costs are kept in micro-dollars and named in USD.
    const shown = limit === 'maxCostUsd' ? usdOf : (n: number) => n;
    return { limit, value: shown(value), capValue: shown(capValue) };
  }
  return undefined;
}

/** The entity as errors name it: `agent "researcher"`. */
function entityLabel(entity: CappedEntity): string {
  return `${entity.kind} "${entity.name}"`;
}

/**
 * Throws {@link CapExceededError} naming the field and the cap when a limit
 * `request` asks for is above its entity's caps (`hint` says what else may be
 * done). The one check of caps: creates, forks, continues and budget raises.
 */
export function assertWithinCaps(
  entity: CappedEntity,
  request: CappedRequest,
  hint?: string,
): void {
  const over = overCap(entity.caps, request);
  if (over)
    throw new CapExceededError(
      CAPPED[over.limit].field,
      over.value,
      CAPPED[over.limit].cap,
      over.capValue,
      entityLabel(entity),
      hint,
    );
}

/**
 * The budget and deadline of a new run of `entity` (a create or a fork): what
 * the request names, each within the entity's caps ({@link assertWithinCaps}),
 * else the entity's defaults (`budget`, `maxDurationMs`), with each limit a
 * cap sets and they lack filled in from the cap.
 */
export function newRunLimits(
  entity: CappedEntity & CappedDefaults,
  request: { budget?: Budget; deadlineMs?: number },
): { budget?: Budget; deadlineMs?: number } {
  assertWithinCaps(entity, request);
  const { caps } = entity;
  const deadlineMs = request.deadlineMs ?? entity.maxDurationMs ?? caps?.maxDurationMs;
  const chosen = request.budget ?? entity.budget;
  const budget =
    caps?.budget === undefined ? chosen : ({ ...caps.budget, ...chosen } satisfies Budget);
  return {
    ...(deadlineMs !== undefined && { deadlineMs }),
    ...(budget !== undefined && { budget }),
  };
}
