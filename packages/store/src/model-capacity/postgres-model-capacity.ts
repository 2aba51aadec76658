import { sql } from 'kysely';
import type { Kysely, RawBuilder } from 'kysely';
import type {
  CapacityLimit,
  CapacitySnapshot,
  ModelCapacity,
  Permit,
  PermitAnswer,
  PermitOutcome,
  PermitRequest,
  RateLimitInfo,
} from '@cairn/engine';
import { DEFAULT_CEILING_MEMORY_MS, pauseMsOf, requestPacing } from '@cairn/engine';
import type { Database } from '../schema.js';

/** Options of {@link PostgresModelCapacity}. */
export interface PostgresModelCapacityOptions {
  /**
   * The providers' rate window in ms; grants count for 250 ms more, so the
   * limiter is never less conservative than a window counted from receipt.
   * @defaultValue 60000
   */
  windowMs?: number;
  /** A waiter stays in line while it asks again within this many ms. @defaultValue 2000 */
  waiterTtlMs?: number;
  /** A slot whose holder stops renewing is free again after this many ms. @defaultValue 15000 */
  leaseMs?: number;
  /** How long a 429's concurrency cap is remembered. @defaultValue {@link DEFAULT_CEILING_MEMORY_MS} */
  ceilingMemoryMs?: number;
}

/** Default of {@link PostgresModelCapacityOptions.windowMs}. */
const DEFAULT_WINDOW_MS = 60_000;
/** Default of {@link PostgresModelCapacityOptions.waiterTtlMs}. */
const DEFAULT_WAITER_TTL_MS = 2_000;
/** Default of {@link PostgresModelCapacityOptions.leaseMs}. */
const DEFAULT_LEASE_MS = 15_000;

/** What `cairn_capacity_try_acquire` answers. */
type TryAcquireResult =
  | { granted: true; id: string; holdsSlot: boolean }
  | {
      granted: false;
      retryAfterMs: number;
      reason: Exclude<PermitAnswer, { granted: true }>['reason'];
    };

/**
 * The engine's `ModelCapacity` on Postgres, for a fleet whose queue runs on
 * BullMQ's PostgreSQL backend (no Redis). Each call is one statement calling
 * one PL/pgSQL function of migration `0009_b_model_capacity`, which locks the
 * model's row and does all the work on the database's clock.
 *
 * @example
 * const capacity = new PostgresModelCapacity(createDb(process.env.DATABASE_URL!));
 * const answer = await capacity.tryAcquire({ model: 'openai-chat:gpt-x', limit: { concurrency: 8 },
 *   waiterId: runId, tenant: 'acme', weight: 1, priority: 5, waitedMs: 0, tokens: 1200 });
 */
export class PostgresModelCapacity implements ModelCapacity {
  private readonly settings: {
    windowMs: number;
    waiterTtlMs: number;
    leaseMs: number;
    ceilingMemoryMs: number;
  };

  constructor(
    private readonly db: Kysely<Database>,
    options: PostgresModelCapacityOptions = {},
  ) {
    this.settings = {
      windowMs: options.windowMs ?? DEFAULT_WINDOW_MS,
      waiterTtlMs: options.waiterTtlMs ?? DEFAULT_WAITER_TTL_MS,
      leaseMs: options.leaseMs ?? DEFAULT_LEASE_MS,
      ceilingMemoryMs: options.ceilingMemoryMs ?? DEFAULT_CEILING_MEMORY_MS,
    };
  }

  async tryAcquire(request: PermitRequest): Promise<PermitAnswer> {
    const result = await this.acquire(request, false);
    if (!result.granted) return result;
    const { model, tokens } = request;
    return { granted: true, permit: { id: result.id, model, tokens, holdsSlot: result.holdsSlot } };
  }

  async ready(
    request: PermitRequest,
  ): Promise<Extract<PermitAnswer, { granted: false }> | undefined> {
    const result = await this.acquire(request, true);
    return result.granted ? undefined : result;
  }

  /** `cairn_capacity_try_acquire`; a `probe` grant takes nothing (migration 0031). */
  private acquire(request: PermitRequest, probe: boolean): Promise<TryAcquireResult> {
    const { model, limit, waiterId, tenant, weight, priority, waitedMs, tokens } = request;
    return this.call<TryAcquireResult>(sql`cairn_capacity_try_acquire`, {
      model,
      ...this.pacedLimitArgs(limit),
      waiterId,
      tenant,
      weight,
      priority,
      waitedMs: Math.max(0, waitedMs),
      tokens,
      probe,
    });
  }

  async renew(permit: Permit): Promise<void> {
    if (!permit.holdsSlot) return;
    await this.call(sql`cairn_capacity_renew`, { model: permit.model, permitId: permit.id });
  }

  async release(permit: Permit, outcome: PermitOutcome): Promise<void> {
    await this.call(sql`cairn_capacity_release`, {
      model: permit.model,
      permitId: permit.id,
      usedTokens: outcome.usedTokens,
      ok: outcome.ok,
    });
  }

  rateLimited(
    permit: Permit,
    info: RateLimitInfo,
    limit: CapacityLimit | undefined,
  ): Promise<number> {
    return this.call<number>(sql`cairn_capacity_rate_limited`, {
      model: permit.model,
      permitId: permit.id,
      ...limitArgs(limit),
      pauseMs: pauseMsOf(info),
    });
  }

  async leave(model: string, waiterId: string): Promise<void> {
    await this.call(sql`cairn_capacity_leave`, { model, waiterId });
  }

  async hold(model: string, waiterId: string, forMs: number): Promise<void> {
    // One row of the waiter (its last ask in the future: migration 0028): no lock on the model's row.
    await sql`
      update cairn_capacity_waiters w
      set last_seen = clock_timestamp() + ${Math.max(0, Math.round(forMs))} * interval '1 millisecond'
      from cairn_capacity_models m
      where m.model = ${model} and w.model_id = m.model_id and w.waiter_id = ${waiterId}`.execute(
      this.db,
    );
  }

  wake(model: string, limit: CapacityLimit | undefined): Promise<string[]> {
    return this.call<string[]>(sql`cairn_capacity_wake`, { model, ...this.pacedLimitArgs(limit) });
  }

  /** A limit as the acquire-side functions read it, with its pacing (migration 0030: `requestPacing`'s step and tolerance). */
  private pacedLimitArgs(limit: CapacityLimit | undefined) {
    const pacing = requestPacing(limit, this.settings.windowMs);
    return {
      ...limitArgs(limit),
      paceStepMs: pacing?.stepMs,
      paceToleranceMs: pacing?.toleranceMs,
    };
  }

  snapshot(): Promise<CapacitySnapshot[]> {
    return this.call<CapacitySnapshot[]>(sql`cairn_capacity_snapshot`, {});
  }

  /** One round trip: `select <fn>($1::jsonb)`, the limiter's settings added to `args`. */
  private async call<T>(fn: RawBuilder<unknown>, args: Record<string, unknown>): Promise<T> {
    const payload = JSON.stringify({ ...this.settings, ...args });
    const { rows } = await sql<{ result: T }>`select ${fn}(${payload}::jsonb) as result`.execute(
      this.db,
    );
    return rows[0]!.result;
  }
}

/** A configured limit as the functions read it (absent kinds omitted). */
function limitArgs(limit: CapacityLimit | undefined): CapacityLimit {
  return {
    concurrency: limit?.concurrency,
    requestsPerMinute: limit?.requestsPerMinute,
    tokensPerMinute: limit?.tokensPerMinute,
  };
}
