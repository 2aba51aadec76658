/**
 * The model capacity port: permits for model requests, taken fleet-wide
 * before each request (see docs/capacity.md and docs/operations.md, "Model capacity"). The runner asks; an
 * implementation on the queue's Redis or on Postgres answers, each in one
 * round trip. Every duration is relative (ms from now, on the limiter's own
 * clock), so workers' clocks never need to agree.
 */

/** A model's limits as configured (each absent field: no limit of that kind). */
export interface CapacityLimit {
  /** Requests in flight at once, fleet-wide. */
  concurrency?: number;
  /** Requests granted in any sliding 60 s window. */
  requestsPerMinute?: number;
  /** Estimated (then corrected) tokens granted in any sliding 60 s window. */
  tokensPerMinute?: number;
}

/** One attempt to take a permit. */
export interface PermitRequest {
  /** The model's `Model.name`: the limit's key. */
  model: string;
  /** The configured limit; undefined when none is configured (a model governed only after a 429). */
  limit: CapacityLimit | undefined;
  /** Who waits: the run id. A waiter stays in line while it asks again within the limiter's waiter TTL. */
  waiterId: string;
  /** The run's tenant; '' for none. Waiting tenants get permits round robin. */
  tenant: string;
  /** The tenant's weight in that round robin (`CAIRN_TENANT_WEIGHTS`). @defaultValue 1 */
  weight: number;
  /** 1 (highest) to 10; within a tenant, lower first. */
  priority: number;
  /** How long this waiter has waited so far, in ms (kept across parks: it orders a tenant's waiters by age). */
  waitedMs: number;
  /** Estimated tokens of the request (prompt plus expected output). */
  tokens: number;
}

/** A granted permit: hand it back with {@link ModelCapacity.release} or {@link ModelCapacity.rateLimited}. */
export interface Permit {
  readonly id: string;
  readonly model: string;
  /** The token estimate it was granted with. */
  readonly tokens: number;
  /** Whether it holds a concurrency slot (a model with no concurrency limit, configured or adaptive, takes none). */
  readonly holdsSlot: boolean;
}

/** The limiter's answer: a permit, or how long until it expects room for this waiter. */
export type PermitAnswer =
  | { granted: true; permit: Permit }
  | {
      granted: false;
      /** When to ask again (ms from now): the limiter's expectation, never less than 1. */
      retryAfterMs: number;
      /** What binds: the kind of limit that refused, for logs, events and metrics. */
      reason: 'paused' | 'concurrency' | 'requests' | 'tokens' | 'fairness';
    };

/** What a provider's 429 said (any field may be missing). */
export interface RateLimitInfo {
  /** `retry-after-ms`, else `retry-after` (seconds or an HTTP date), in ms. */
  retryAfterMs?: number;
  /** `x-ratelimit-remaining-requests`. */
  remainingRequests?: number;
  /** `x-ratelimit-remaining-tokens`. */
  remainingTokens?: number;
  /** `x-ratelimit-reset-requests` (e.g. `6m0s`, `1s`, `250ms`), in ms. */
  resetRequestsMs?: number;
  /** `x-ratelimit-reset-tokens`, in ms. */
  resetTokensMs?: number;
}

/** How a permit's request ended. */
export interface PermitOutcome {
  /** Tokens the response's usage reported (input + output); undefined when it reported none (the estimate stands). */
  usedTokens?: number;
  /** True when the model answered: the adaptive concurrency may grow back. */
  ok: boolean;
}

/** A model's limiter state, for metrics. */
export interface CapacitySnapshot {
  model: string;
  /** Waiters in line (asked within the waiter TTL). */
  waiting: number;
  /** The concurrency cap in force now (adaptive, never above the configured one); undefined: none. */
  concurrencyLimit?: number;
  /** Requests in flight. */
  inFlight: number;
  /** Ms until a 429's pause ends; 0 when not paused. */
  pausedForMs: number;
}

/**
 * Fleet-wide permits for model requests. Implementations keep every piece of
 * state in the shared server (Redis under the `{cairn}` hash tag, or
 * Postgres) and do each call in one round trip.
 */
export interface ModelCapacity {
  /**
   * Takes a permit if the model's limits (configured, and adaptive after
   * 429s) leave room and this waiter is next in fair order (round robin
   * across waiting tenants by weight, then priority, then age); otherwise
   * puts the waiter in line and says when to ask again.
   */
  tryAcquire(request: PermitRequest): Promise<PermitAnswer>;
  /**
   * Whether {@link tryAcquire} would grant `request` now, taking nothing (no permit, no slot, no
   * window entry, no turn of the fair order): undefined when it would, else its refusal. Either
   * way the waiter is in line as asking now, as {@link tryAcquire} leaves it: a run brought back
   * from a park asks this before its worker claims it, and asks for the permit at once if so.
   */
  ready(request: PermitRequest): Promise<Extract<PermitAnswer, { granted: false }> | undefined>;
  /**
   * Extends the lease of the permit's slot while its request runs (a slot
   * whose holder died is free again once its lease ends). The runner renews
   * every third of the lease.
   */
  renew(permit: Permit): Promise<void>;
  /** Gives the permit's slot back and corrects its token estimate by what was used. */
  release(permit: Permit, outcome: PermitOutcome): Promise<void>;
  /**
   * A provider's 429 on the permit's request: releases the permit (its request
   * still counts toward the window), pauses the model fleet-wide until the
   * provider's reset, and halves its concurrency cap (creating an adaptive
   * one for a model with no configured concurrency). Returns how long the
   * model is paused, in ms.
   */
  rateLimited(
    permit: Permit,
    info: RateLimitInfo,
    limit: CapacityLimit | undefined,
  ): Promise<number>;
  /** Takes a waiter out of line (it parked with `CAIRN_CAPACITY_LINE=off`, or was cancelled). */
  leave(model: string, waiterId: string): Promise<void>;
  /**
   * Keeps a waiter that parks in its place in line for `forMs` (when the
   * limiter expects room for it): it counts as present until then (and for
   * the waiter TTL after), so the fair order and the waits told to the
   * waiters behind it include it, and it finds its place when it asks again.
   * A waiter no longer in line is left out.
   */
  hold(model: string, waiterId: string, forMs: number): Promise<void>;
  /**
   * The parked waiters held in line ({@link hold}) that room free now lets
   * in, beyond the waiters asking: at most that many, in fair order, none
   * while the model is paused. Each is marked as asking now (the room is kept
   * for it for the waiter TTL); the caller brings their runs back at once.
   * `limit` is the model's configured limit, as {@link tryAcquire} takes it.
   */
  wake(model: string, limit: CapacityLimit | undefined): Promise<string[]>;
  /** The state of each model this limiter has seen, for metrics. */
  snapshot(): Promise<CapacitySnapshot[]>;
}
