import { abortableSleep } from '../runner/abortable-sleep.js';
import type { Usage } from '../messages.js';
import { CapacityParkSignal } from './capacity-park-signal.js';
import type { ModelCapacity, Permit, RateLimitInfo } from './model-capacity.js';
import { limitFor, type ModelLimit } from './model-limits.js';

/** Default of `CAIRN_CAPACITY_WAIT_MS`: how long a run waits for a permit in place before it parks. */
export const DEFAULT_CAPACITY_WAIT_MS = 1000;

/** How an engine governs model requests fleet-wide (the worker builds it from its config). */
export interface CapacitySettings {
  /** The fleet-wide limiter (on the queue's Redis, or on Postgres). */
  limiter: ModelCapacity;
  /** `CAIRN_MODEL_LIMITS` over the registry's `modelLimits`. */
  limits: readonly ModelLimit[];
  /** `CAIRN_CAPACITY_WAIT_MS`. @defaultValue {@link DEFAULT_CAPACITY_WAIT_MS} */
  waitMs?: number;
  /**
   * `CAIRN_CAPACITY_LINE`: a run that parks stays in the model's line (`ModelCapacity.hold`) until
   * a worker wakes it into free room, or the limit's expectation and a margin pass; false: it
   * leaves the line and comes back when the limit expects room. @defaultValue true
   */
  line?: boolean;
  /** `CAIRN_TENANT_WEIGHTS`: a tenant's share of a limit when several wait; absent tenants weigh 1. */
  tenantWeights?: ReadonlyMap<string, number>;
  /** The longest a waiter sleeps between two asks (below the limiter's waiter TTL, so it stays in line). @defaultValue 250 */
  pollMs?: number;
  /** How often a permit's slot lease is renewed while its request runs (a third of the limiter's lease). @defaultValue 5000 */
  renewMs?: number;
  /** A release or renewal failed (the slot's lease ends it instead): reported, never thrown. */
  onError?: (error: unknown) => void;
}

/**
 * How long past the limit's expectation a parked run waits in line before it
 * comes back by itself: the workers wake it as soon as room frees, so this
 * only bounds a lost wake-up.
 */
const PARK_FALLBACK_MARGIN_MS = 2000;

/**
 * Parks a waiter: in line (`CAIRN_CAPACITY_LINE`), held there until the limit's expectation and
 * {@link PARK_FALLBACK_MARGIN_MS}; out of line, it leaves. Resolves with how long its job is delayed.
 * A limiter error is reported to the settings' `onError`, never thrown (the job's delay brings it back).
 */
export async function parkInLine(
  settings: CapacitySettings,
  model: string,
  waiterId: string,
  retryAfterMs: number,
): Promise<number> {
  const failed = (error: unknown) => settings.onError?.(error);
  if (settings.line === false) {
    await settings.limiter.leave(model, waiterId).catch(failed);
    return retryAfterMs;
  }
  const parkMs = retryAfterMs + PARK_FALLBACK_MARGIN_MS;
  await settings.limiter.hold(model, waiterId, parkMs).catch(failed);
  return parkMs;
}

/** How long a tree waited for a permit before this pickup (its parks), until its first permit reports it. */
export interface CarriedWait {
  ms: number;
}

/** What one execution's gate knows of its run. */
export interface GatedRun {
  runId: string;
  /** '' for none. */
  tenant: string;
  priority: number;
  /**
   * When the run was created (ms since the epoch, the store's clock): its age orders it among its
   * tenant's waiters (after priority), for every request, so a run past its first request keeps
   * its place for the next rather than going behind the runs not yet started.
   */
  createdAt: number;
  /** False in `run` mode (no checkpoint to stand on): the run waits in place instead of parking. */
  mayPark: boolean;
  /** How long the tree had waited for a permit before this pickup (a park's wait, carried by its job), shared by its executions. */
  carried: CarriedWait;
  signal: AbortSignal;
  /** The run starts waiting longer than the capacity wait (it parks, or waits in place): `CapacityWait`. */
  onWait(wait: { model: string; retryAfterMs: number; reason: string; waitedMs: number }): void;
}

/**
 * An execution's door to the fleet's model capacity: takes a permit before
 * each model request (waiting in place up to the capacity wait, then
 * parking the run with {@link CapacityParkSignal}), keeps its slot's lease
 * while the request runs, and gives it back with the response's usage or
 * the provider's 429.
 */
export class ModelGate {
  constructor(
    private readonly settings: CapacitySettings,
    private readonly run: GatedRun,
  ) {}

  /**
   * A permit for one request to `model`; `tokens` estimates its tokens, asked
   * only when the model has a tokens-per-minute limit (the estimate reads the
   * whole prompt). Throws
   * {@link CapacityParkSignal} once the wait would pass the capacity wait
   * (never in `run` mode), or the signal's reason when the run is aborted.
   * Resolves with how long it waited too, for metrics.
   */
  async take(model: string, tokens: () => number): Promise<{ permit: Permit; waitedMs: number }> {
    const { limiter, tenantWeights } = this.settings;
    const waitMs = this.settings.waitMs ?? DEFAULT_CAPACITY_WAIT_MS;
    const pollMs = this.settings.pollMs ?? 250;
    const limit = limitFor(this.settings.limits, model);
    const estimate = limit?.tokensPerMinute ? tokens() : 0;
    const { runId, tenant, priority, signal } = this.run;
    const started = Date.now();
    let announced = false;
    for (let ask = 1; ; ask++) {
      signal.throwIfAborted();
      // Granted at the first ask, the run waited for nothing here (a clock tick is not a wait).
      const waitedHere = ask === 1 ? 0 : Date.now() - started;
      // Its place in line: as old as the run (or its wait, if longer: a clock apart from the store's).
      const age = Math.max(this.run.carried.ms + waitedHere, Date.now() - this.run.createdAt);
      const answer = await limiter.tryAcquire({
        model,
        limit,
        waiterId: runId,
        tenant,
        weight: tenantWeights?.get(tenant) ?? 1,
        priority,
        waitedMs: age,
        tokens: estimate,
      });
      if (answer.granted) {
        const waitedMs = this.run.carried.ms + waitedHere;
        this.run.carried.ms = 0;
        return { permit: answer.permit, waitedMs };
      }
      const { retryAfterMs, reason } = answer;
      if (waitedHere + retryAfterMs > waitMs && !announced) {
        announced = true;
        const wait = { model, retryAfterMs, reason, waitedMs: this.run.carried.ms + waitedHere };
        this.run.onWait(wait);
        if (this.run.mayPark) throw await this.park(model, retryAfterMs, wait.waitedMs);
      }
      // A little jitter keeps a crowd of waiters from asking in lockstep.
      const sleepMs = Math.max(1, Math.min(retryAfterMs, pollMs) * (0.8 + Math.random() * 0.4));
      await abortableSleep(sleepMs, signal);
    }
  }

  /**
   * Parks the run: in line, it waits there while parked (the runs behind it are told to wait for
   * it too) until a worker wakes it into free room; past the limit's expectation by a margin, it
   * comes back by itself (a wake-up lost: the limiter's state gone, no worker running). Out of
   * line, it comes back when the limit expects room.
   */
  private async park(model: string, retryAfterMs: number, waitedMs: number) {
    const { runId, tenant, priority } = this.run;
    const parkMs = await parkInLine(this.settings, model, runId, retryAfterMs);
    return new CapacityParkSignal(runId, model, parkMs, waitedMs, { id: runId, tenant, priority });
  }

  /** Runs `request` holding `permit`, renewing its slot's lease meanwhile. */
  async hold<T>(permit: Permit, request: () => Promise<T>): Promise<T> {
    if (!permit.holdsSlot) return request();
    const timer = setInterval(() => {
      this.settings.limiter.renew(permit).catch((error: unknown) => this.failed(error));
    }, this.settings.renewMs ?? 5000);
    try {
      return await request();
    } finally {
      clearInterval(timer);
    }
  }

  /** Gives the permit back after its request ended: with the usage the response reported when it answered. */
  async release(permit: Permit, answered: { usage?: Usage } | undefined): Promise<void> {
    // A permit that took no slot, on a model counted by no window, left nothing to give back: no round trip.
    const limit = limitFor(this.settings.limits, permit.model);
    if (!permit.holdsSlot && !limit?.requestsPerMinute && !limit?.tokensPerMinute) return;
    const usedTokens = answered?.usage?.totalTokens;
    await this.settings.limiter
      .release(permit, {
        ok: answered !== undefined,
        ...(usedTokens !== undefined && usedTokens > 0 && { usedTokens }),
      })
      .catch((error: unknown) => this.failed(error));
  }

  /** The provider answered 429 to the permit's request: the fleet pauses the model; resolves with how long (ms). */
  rateLimited(permit: Permit, info: RateLimitInfo): Promise<number> {
    return this.settings.limiter.rateLimited(
      permit,
      info,
      limitFor(this.settings.limits, permit.model),
    );
  }

  private failed(error: unknown): void {
    this.settings.onError?.(error);
  }
}
