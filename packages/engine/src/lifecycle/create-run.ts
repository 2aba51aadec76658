import { canonicalDigest } from '../canonical-digest.js';
import { assertDeadlineMs } from '../deadline-ms.js';
import { newRunLimits } from '../entity-caps.js';
import type { EngineResources } from '../engine-resources.js';
import { EntityNotFoundError, UserError } from '../errors.js';
import {
  CHECKPOINT_MODES,
  type CheckpointMode,
  type CreatedRun,
  type EntityRef,
  type IdempotencyClaim,
} from '../run-types.js';
import { budgetOf, type BudgetOption } from '../spend/budget-option.js';
import { assertTenantDayOpen } from '../spend/tenant-budget.js';

/** What the `create` move ({@link createRun}, `Engine.createRun`) takes. */
export interface CreateRunRequest {
  entity: EntityRef;
  input: string;
  sessionId?: string;
  userId?: string | null;
  /** @defaultValue the entity's own checkpoint mode */
  checkpoint?: CheckpointMode;
  metadata?: Record<string, unknown>;
  /** The tenant creating the run (its key's); null or absent: an admin key. */
  tenantId?: string | null;
  /** 1 (highest) to 10: orders the tenant's own runs, in the queue and waiting for a model's permits (tenants share both by weight). @defaultValue 5 */
  priority?: number;
  /**
   * The run must end within this many ms of its creation (at most 365 days): at its deadline
   * its calls are aborted and it ends in ERROR (`DeadlineExceededError`); not above the entity's
   * `caps.maxDurationMs` (`CapExceededError`). @defaultValue the entity's `maxDurationMs`, else its cap, else none
   */
  deadlineMs?: number;
  /**
   * What the run's tree may spend before it pauses for a person to raise it: each limit from one
   * micro-dollar (one token) to `MAX_BUDGET_USD` (`MAX_BUDGET_TOKENS`), not above the entity's
   * `caps.budget`. @defaultValue the entity's `budget`, else none; a limit the entity caps is filled in from the cap
   */
  budget?: BudgetOption;
  /**
   * Makes the creation idempotent per tenant: the same key with the same request returns the run the
   * first one created (`replayed: true`); with a different request, `IdempotencyKeyReusedError`.
   */
  idempotencyKey?: string;
}

/**
 * The `create` move of a top-level run (PENDING, nothing executed): the request checked (each
 * field named in its `UserError`), the entity looked up in the catalog (`EntityNotFoundError`),
 * its deadline and budget within the entity's caps, its tenant's day budget open; a request
 * whose idempotency key created a run before gets that run back (`replayed`). A fork
 * (`fork-run.ts`) and a team's member run (`member-runs.ts`) are created by their own moves,
 * from their source or parent.
 */
export async function createRun(
  resources: EngineResources,
  request: CreateRunRequest,
): Promise<CreatedRun> {
  const entity = await resources.catalog.describe(request.entity);
  if (!entity) throw new EntityNotFoundError(request.entity.kind, request.entity.name);
  if (typeof request.input !== 'string' || request.input.trim() === '') {
    throw new UserError('input must be a non-empty string');
  }
  if (request.checkpoint !== undefined && !CHECKPOINT_MODES.includes(request.checkpoint)) {
    throw new UserError(`checkpoint must be one of ${CHECKPOINT_MODES.join(', ')}`);
  }
  const { priority } = request;
  if (priority !== undefined && !(Number.isInteger(priority) && priority >= 1 && priority <= 10)) {
    throw new UserError(
      `priority must be an integer from 1 (highest) to 10, got ${String(priority)}`,
    );
  }
  assertDeadlineMs('deadlineMs', request.deadlineMs);
  const { deadlineMs, budget } = newRunLimits(entity, {
    ...(request.deadlineMs !== undefined && { deadlineMs: request.deadlineMs }),
    ...(request.budget !== undefined && { budget: budgetOf(request.budget, 'budget') }),
  });
  await assertTenantCreates(resources, request.tenantId ?? null);
  return resources.store.createRun({
    entity: request.entity,
    input: request.input,
    sessionId: request.sessionId,
    userId: request.userId ?? null,
    checkpoint: request.checkpoint ?? entity.checkpoint,
    definitionHash: entity.definitionHash,
    metadata: request.metadata,
    tenantId: request.tenantId ?? null,
    ...(priority !== undefined && { priority }),
    ...(deadlineMs !== undefined && { deadlineMs }),
    ...(budget !== undefined && { budget }),
    ...idempotencyOf(request.tenantId, request.idempotencyKey, {
      entity: request.entity,
      input: request.input,
      sessionId: request.sessionId,
      userId: request.userId,
      checkpoint: request.checkpoint,
      metadata: request.metadata,
      priority: request.priority,
      deadlineMs: request.deadlineMs,
      budget: request.budget,
    }),
  });
}

/**
 * Refuses a new run of a tenant whose day budget is spent (`TenantBudgetExhaustedError`, HTTP
 * 429): the `create` and `fork` moves ask it; a member run is its team's spend.
 */
export function assertTenantCreates(
  { store, tenantBudgets }: EngineResources,
  tenantId: string | null,
): Promise<void> {
  return assertTenantDayOpen((t) => store.tenantDaySpend(t), tenantBudgets, tenantId);
}

/**
 * The idempotency claim of a new run made under `key` (none without one): scoped to its tenant
 * (admin keys: ''), a repeat told from a reuse by the digest of `request`, the request as the
 * move names it. The `create` and `fork` moves ask it.
 */
export function idempotencyOf(
  tenantId: string | null | undefined,
  key: string | undefined,
  request: unknown,
): { idempotency?: IdempotencyClaim } {
  if (key === undefined) return {};
  return { idempotency: { scope: tenantId ?? '', key, requestDigest: canonicalDigest(request) } };
}
