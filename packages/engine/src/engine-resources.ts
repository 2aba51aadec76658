import type { CheckpointStore } from './checkpoint-store.js';
import type { OnAttemptsExhausted } from './suspension.js';
import type { EntityCatalog } from './entity-catalog.js';
import type { RunContentSink, RunEventSink } from './events.js';
import type { Model } from './model.js';
import type { Registry } from './registry.js';
import type { RetryPolicy } from './runner/model-retry.js';
import type { CapacitySettings } from './capacity/model-gate.js';
import type { ModelPrices } from './spend/model-prices.js';
import type { TenantBudgets, TenantSpendLedger } from './spend/tenant-budget.js';

/** The limits every execution of an engine runs under. */
export interface EngineLimits {
  /** Claims without a new checkpoint beyond which a run ends in ERROR (`CAIRN_MAX_ATTEMPTS`). */
  maxAttempts: number;
  /** What a run that used up `maxAttempts` does (`CAIRN_ON_ATTEMPTS_EXHAUSTED`): ERROR, or wait suspended. @defaultValue 'error' */
  onAttemptsExhausted?: OnAttemptsExhausted;
  /** How long a run whose entity the registry lacks, or has with another definition, is left for another worker (`CAIRN_VERSION_GRACE_MS`). */
  versionGraceMs: number;
  /** How often an execution started by a pickup re-reads its run row (epoch, cancel). */
  leaseCheckMs: number;
  /** How model calls are retried. */
  retry: RetryPolicy;
}

/**
 * Where the engine reads the time, and what its timers of a rule (an
 * execution's deadline) count on: a test clock moves both without waiting.
 */
export interface Clock {
  now(): Date;
  /** Calls `fn` once this clock has moved `ms` on; the returned function cancels it. */
  setTimer(ms: number, fn: () => void): () => void;
}

/** The wall clock, with Node's timers. */
export const SYSTEM_CLOCK: Clock = {
  now: () => new Date(),
  setTimer: (ms, fn) => {
    const timer = setTimeout(fn, ms);
    return () => clearTimeout(timer);
  },
};

/**
 * What the engine's parts run on, built once by `Engine` and passed as is to
 * the lifecycle (which owns every move of a run) and through it to the runner
 * (which executes): no part calls back into `Engine`.
 *
 * Job port: nothing here calls the queue while it executes. A move that
 * needs the queue (enqueue, delay, remove a job) is returned by the lifecycle
 * as a `JobIntent` that the queue's `JobPort` carries out (both in
 * `lifecycle/intents.ts`), so no part here holds the queue.
 */
export interface EngineResources {
  /** The store port: fenced writes and the reads executions need. */
  readonly store: CheckpointStore;
  /** The entities this engine executes; undefined on an engine that only creates and continues runs. */
  readonly registry: Registry | undefined;
  /** Where new runs (and forks) look their entity's definition up. */
  readonly catalog: EntityCatalog;
  /** Shown in every attempt this engine claims. */
  readonly workerId: string;
  readonly clock: Clock;
  readonly limits: EngineLimits;
  /** Receives run events, in order. */
  readonly events: RunEventSink;
  /** Receives what runs send and get back (opt-in message content); undefined: nobody asked. */
  readonly content: RunContentSink | undefined;
  /** Replaces the model of every entity (`CAIRN_MODEL`). */
  readonly model: Model | undefined;
  /** The app's context for tools when an execution gives none (`ctx.context`). */
  readonly context: unknown;
  /** A lease check failed (the watch keeps going). */
  readonly onLeaseCheckError: ((error: unknown) => void) | undefined;
  /** Prices by model (`CAIRN_MODEL_PRICES`, a registry's `modelPrices`): the cost kept with each run's usage. */
  readonly prices: ModelPrices | undefined;
  /** The fleet's model capacity: permits before each model request; undefined: requests go straight out. */
  readonly capacity: CapacitySettings | undefined;
  /** USD each tenant may spend per UTC day (`CAIRN_TENANT_BUDGETS`); undefined: no tenant is held to one. */
  readonly tenantBudgets: TenantBudgets | undefined;
  /** This engine's view of its tenants' day spend (set with `tenantBudgets`): no round trip per model request. */
  readonly tenantSpend: TenantSpendLedger | undefined;
}
