import type { Agent } from './agent.js';
import type { Team } from './team.js';
import type { CheckpointStore } from './checkpoint-store.js';
import { SYSTEM_CLOCK, type Clock, type EngineResources } from './engine-resources.js';
import type { EntityCatalog } from './entity-catalog.js';
import { UserError } from './errors.js';
import type { RunContentSink, RunEventSink } from './events.js';
import type { Model } from './model.js';
import { Registry } from './registry.js';
import { outputOf } from './runner/output-type.js';
import { type CreatedRun, type ForkedFrom, type EntityRef, type RunRecord } from './run-types.js';
import { DEFAULT_MAX_ATTEMPTS } from './lifecycle/attempts-cap.js';
import type { OnAttemptsExhausted } from './suspension.js';
import type { ContinueDecision } from './lifecycle/continue-rules.js';
import { continueRun, type ContinueRequest } from './lifecycle/continue-run.js';
import { forkRun, type ForkRequest } from './lifecycle/fork-run.js';
import { createRun, type CreateRunRequest } from './lifecycle/create-run.js';
import { decisionValidatorFor } from './lifecycle/decide-run.js';
import type { PostedDecision } from './hitl/pending-action.js';
import type { DecisionValidator } from './run-control-store.js';
import type { ExecuteOptions, ExecutionResult } from './lifecycle/execute-options.js';
import { executeRun, registryOf } from './lifecycle/execute-run.js';
import { processPickup } from './lifecycle/pickup.js';
import type { Pickup, PickupOptions, PickupOutcome } from './lifecycle/pickup-types.js';
import { DEFAULT_RETRY_POLICY, type RetryPolicy } from './runner/model-retry.js';
import type { CapacitySettings } from './capacity/model-gate.js';
import type { ModelPrices } from './spend/model-prices.js';
import { TenantSpendLedger, type TenantBudgets } from './spend/tenant-budget.js';

/** Options of {@link Engine}. */
export interface EngineOptions {
  store: CheckpointStore;
  /** The entities this engine executes; an engine that only creates and continues runs may go without. */
  registry?: Registry;
  /** Where `createRun` looks entities up. @defaultValue the registry */
  catalog?: EntityCatalog;
  /** Shown in every attempt this engine claims. @defaultValue 'in-process' */
  workerId?: string;
  /** Replaces the model of every entity (`CAIRN_MODEL`). */
  model?: Model;
  /** Receives run events, in order. */
  onEvent?: RunEventSink;
  /** Where every rule this engine applies reads the time (deadlines, expiries, event and call times). @defaultValue the wall clock */
  clock?: Clock;
  /**
   * Receives what each run sends to its model and tools and gets back, as it
   * happens: for a tracer that records message content on opt-in
   * (`OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`). Never stored by this path.
   */
  onContent?: RunContentSink;
  /** @defaultValue {@link DEFAULT_RETRY_POLICY} */
  retry?: RetryPolicy;
  /** The app's context every tool this engine runs receives as `ctx.context` (a run's own `context` wins). */
  context?: unknown;
  /** Claims without a new checkpoint beyond which a run ends in ERROR (`CAIRN_MAX_ATTEMPTS`). @defaultValue {@link DEFAULT_MAX_ATTEMPTS} */
  maxAttempts?: number;
  /** What a run that used up `maxAttempts` does (`CAIRN_ON_ATTEMPTS_EXHAUSTED`): end in ERROR, or wait suspended for an operator's resume. @defaultValue 'error' */
  onAttemptsExhausted?: OnAttemptsExhausted;
  /** How long a run whose entity this registry lacks is left for another worker (`CAIRN_VERSION_GRACE_MS`). @defaultValue {@link DEFAULT_VERSION_GRACE_MS} */
  versionGraceMs?: number;
  /** How often an execution started by a pickup re-reads its run row (epoch, cancel). @defaultValue 1000 */
  leaseCheckMs?: number;
  /** A lease check failed (the watch keeps going). */
  onLeaseCheckError?: (error: unknown) => void;
  /**
   * Governs model requests by the fleet's limits (`CAIRN_MODEL_LIMITS`): a permit before each
   * request, parking a run that waits longer than the capacity wait. Without it requests go
   * straight out, and a provider's 429 is waited out in place.
   */
  capacity?: CapacitySettings;
  /** Prices by model (`parseModelPrices`): each response's cost is kept with the run's usage, in micro-dollars. */
  prices?: ModelPrices;
  /**
   * USD each tenant may spend per UTC day, counted fleet-wide (`CAIRN_TENANT_BUDGETS`, `parseTenantBudgets`):
   * a spent tenant's new runs are refused (`TenantBudgetExhaustedError`) and its running runs pause
   * with a budget action at their next model request. @defaultValue none
   */
  tenantBudgets?: TenantBudgets;
}

/** The engine's tenant budgets (checked) and, with any, its ledger of their day spend. */
function tenantSpendOf(
  options: EngineOptions,
): Pick<EngineResources, 'tenantBudgets' | 'tenantSpend'> {
  const budgets = options.tenantBudgets;
  if (!budgets || Object.keys(budgets).length === 0)
    return { tenantBudgets: undefined, tenantSpend: undefined };
  for (const [tenant, usd] of Object.entries(budgets)) {
    if (!(Number.isFinite(usd) && usd > 0))
      throw new UserError(
        `tenantBudgets.${tenant} must be a positive number of USD per UTC day, got ${String(usd)}`,
      );
  }
  const { store } = options;
  return {
    tenantBudgets: budgets,
    tenantSpend: new TenantSpendLedger((tenantId) => store.tenantDaySpend(tenantId)),
  };
}

/** Default of `CAIRN_VERSION_GRACE_MS`: five minutes, the length of a slow rolling deploy. */
export const DEFAULT_VERSION_GRACE_MS = 300_000;

/** What {@link Engine.run} takes besides the entity and its input. */
export interface RunOptions extends Omit<CreateRunRequest, 'entity' | 'input'> {
  /** Aborting it cancels the run (CANCELLED is persisted). */
  signal?: AbortSignal;
  /** The app's context for this run's tools (`ctx.context`), over the engine's. Not persisted: a resume elsewhere gets that engine's. */
  context?: unknown;
}

/** A run {@link Engine.run} executed to its end, with the entity's output when it COMPLETED (typed by its `outputType`). */
export type RunResult<Output = unknown> = RunRecord & { output: Output | undefined };

/**
 * Runs agents and teams durably on a {@link CheckpointStore}: creates runs,
 * applies continue rules and executes runs with fenced checkpoints.
 *
 * @example
 * ```ts
 * // In process: one call, durable on the store, no registry needed.
 * const engine = new Engine({ store });
 * const run = await engine.run(researcher, 'Research X');
 *
 * // As workers do: entities from a registry, runs created and executed apart.
 * const engine = new Engine({ store, registry, workerId: 'local' });
 * const run = await engine.createRun({ entity: { kind: 'team', name: 'research-team' }, input: 'Research X', checkpoint: 'tool-batch' });
 * const result = await engine.execute(run.runId, { reason: 'run' });
 * ```
 */
export class Engine {
  readonly store: CheckpointStore;
  private readonly registry?: Registry;
  /** What the lifecycle and the runner run on, built once here. */
  private readonly resources: EngineResources;
  private readonly options: EngineOptions;

  constructor(options: EngineOptions) {
    this.options = options;
    this.store = options.store;
    this.registry = options.registry;
    this.resources = {
      store: options.store,
      registry: options.registry,
      catalog: options.catalog ?? options.registry ?? { describe: () => undefined },
      workerId: options.workerId ?? 'in-process',
      clock: options.clock ?? SYSTEM_CLOCK,
      limits: {
        maxAttempts: options.maxAttempts ?? DEFAULT_MAX_ATTEMPTS,
        onAttemptsExhausted: options.onAttemptsExhausted ?? 'error',
        versionGraceMs: options.versionGraceMs ?? DEFAULT_VERSION_GRACE_MS,
        leaseCheckMs: options.leaseCheckMs ?? 1000,
        retry: options.retry ?? DEFAULT_RETRY_POLICY,
      },
      events: options.onEvent ?? (() => undefined),
      content: options.onContent,
      model: options.model,
      context: options.context,
      onLeaseCheckError: options.onLeaseCheckError,
      capacity: options.capacity,
      prices: options.prices,
      ...tenantSpendOf(options),
    };
  }

  /**
   * Creates a run of `entity` and executes it here, to its end: durable on
   * the store like any run (same checkpoints, continuable by id), but no
   * registry, queue or worker is needed. Resolves with the finished run and
   * its `output` (validated by the entity's `outputType`, if any).
   */
  async run<Output>(
    entity: Agent<Output> | Team<Output>,
    input: string,
    options: RunOptions = {},
  ): Promise<RunResult<Output>> {
    const ref: EntityRef = { kind: entity.kind, name: entity.name };
    const known = this.registry?.has(ref) && this.registry.get(ref) === entity;
    const registry =
      entity.kind === 'agent'
        ? new Registry({ agents: [entity] })
        : new Registry({ teams: [entity] });
    const engine = known ? this : new Engine({ ...this.options, registry, catalog: registry });
    const { signal, context, ...request } = options;
    const created = await engine.createRun({ ...request, entity: ref, input });
    const result = await engine.execute(created.runId, { reason: 'run', signal, context });
    // No handover signal was given, so the execution ran to a final status.
    const run =
      result.outcome === 'finished' ? result.run : (await this.store.getRun(created.runId))!;
    const output =
      run.status === 'COMPLETED' ? (outputOf(entity.outputType, run.content) as Output) : undefined;
    return { ...run, output };
  }

  /** Validates the request and creates the run in PENDING (or returns the one its idempotency key created); nothing is executed. */
  createRun(request: CreateRunRequest): Promise<CreatedRun> {
    return createRun(this.resources, request);
  }

  /**
   * Applies the continue rules to a run ({@link continueRun}). For a fork, creates the new run
   * (PENDING, holding the old run's messages and the new input) and returns it.
   */
  continueRun(runId: string, request: ContinueRequest = {}): Promise<ContinueDecision> {
    return continueRun(this.resources, runId, request);
  }

  /**
   * How the store validates decisions `decider`'s key posts on `runId`'s tree
   * ({@link decisionValidatorFor}: a tenant key may not decide its tenant's spent day, nor raise a
   * budget past its entity's caps), for the lifecycle's `decideAndResume`.
   */
  decisionValidator(
    runId: string,
    decisions: readonly PostedDecision[],
    decider: { tenantId: string | null },
  ): Promise<DecisionValidator> {
    return decisionValidatorFor(this.resources, runId, decisions, decider);
  }

  /**
   * Forks a run at a checkpoint ({@link forkRun}): a new run (PENDING) whose
   * history is the source's up to that point, shared not copied, then `input`.
   */
  forkRun(
    runId: string,
    request: ForkRequest = {},
  ): Promise<CreatedRun & { forkedFrom: ForkedFrom }> {
    return forkRun(this.resources, runId, request);
  }

  /**
   * Claims the run and executes it to a final status (or to a hand-back).
   * Throws `LeaseLostError` when another execution claimed the run meanwhile.
   */
  execute(runId: string, options: ExecuteOptions): Promise<ExecutionResult> {
    registryOf(this.resources);
    return executeRun(this.resources, runId, options);
  }

  /**
   * What a pickup of a queued job does (skip, cancel at claim, resolve the
   * entity, claim, execute under a lease watch): the queue's one call.
   * Throws only errors whose disposition is `retry-job`.
   */
  processPickup(pickup: Pickup, options: PickupOptions = {}): Promise<PickupOutcome> {
    registryOf(this.resources);
    return processPickup(this.resources, pickup, options);
  }
}
