import { createHash, randomBytes } from 'node:crypto';
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
import type { RedisConnection } from '../redis-connection.js';
import {
  ACQUIRE_SCRIPT,
  HOLD_SCRIPT,
  LEAVE_SCRIPT,
  WAKE_SCRIPT,
  MODEL_KEY_SUFFIXES,
  RATE_LIMITED_SCRIPT,
  RELEASE_SCRIPT,
  RENEW_SCRIPT,
  SNAPSHOT_SCRIPT,
} from './redis-model-capacity-script.js';
import { UngovernedModels } from './ungoverned-models.js';

/** Options of {@link RedisModelCapacity}. */
export interface RedisModelCapacityOptions {
  /** Prefix of every key; in Redis Cluster it must hold a hash tag (`{cairn}`), so all keys land in one slot. */
  prefix: string;
  /** The sliding window of requests and tokens per minute, in ms. @defaultValue 60_000 */
  windowMs?: number;
  /** How long a waiter stays in line without asking again, in ms. @defaultValue 2_000 */
  waiterTtlMs?: number;
  /** How long a slot stays held without renew or release, in ms. @defaultValue 15_000 */
  leaseMs?: number;
  /** How long a 429's concurrency cap is remembered. @defaultValue {@link DEFAULT_CEILING_MEMORY_MS} */
  ceilingMemoryMs?: number;
  /**
   * A connection of its own for pub/sub: with it, a model nothing governs
   * (no limit, no adaptive cap, no pause) is granted without a round trip once
   * seen so, until a 429 anywhere in the fleet is published. Without it every
   * permit is asked of the server.
   */
  subscriber?: RedisConnection;
  /** How long a model seen ungoverned is trusted without asking again, in ms. @defaultValue {@link DEFAULT_UNGOVERNED_TTL_MS} */
  ungovernedTtlMs?: number;
}

interface Script {
  lua: string;
  sha: string;
}

const script = (lua: string): Script => ({
  lua,
  sha: createHash('sha1').update(lua).digest('hex'),
});

const ACQUIRE = script(ACQUIRE_SCRIPT);
const RENEW = script(RENEW_SCRIPT);
const RELEASE = script(RELEASE_SCRIPT);
const RATE_LIMITED = script(RATE_LIMITED_SCRIPT);
const LEAVE = script(LEAVE_SCRIPT);
const HOLD = script(HOLD_SCRIPT);
const WAKE = script(WAKE_SCRIPT);
const SNAPSHOT = script(SNAPSHOT_SCRIPT);

const REFUSAL_REASONS = new Set<string>([
  'paused',
  'concurrency',
  'requests',
  'tokens',
  'fairness',
]);

/** An optional limit as a script argument: '' for none. */
const optional = (value: number | undefined): string => (value === undefined ? '' : String(value));

/** A permit's id: a random nonce (the scripts append the grant time to those they issue). */
const permitNonce = (): string => randomBytes(9).toString('base64url');

/**
 * The fleet-wide {@link ModelCapacity} on the queue's Redis: every call is one
 * Lua script (one round trip, atomic) on keys `<prefix>:cap:<model>:*`, timed
 * by the server's clock alone. Concurrency slots are leased, requests and
 * tokens counted in a sliding window, 429s pause the model and halve an
 * adaptive cap, and waiters get permits in start-time fair order across
 * tenants. Idle models' keys expire a few windows after their last use.
 * With a `subscriber`, a model nothing governs is granted locally (see
 * {@link UngovernedModels}); a 429 is published on `<prefix>:cap-governed`.
 *
 * @example
 * ```ts
 * const capacity = new RedisModelCapacity(redis, { prefix: '{cairn}' });
 * const answer = await capacity.tryAcquire({ model: 'openai-chat:gpt-x', limit: { concurrency: 8 },
 *   waiterId: runId, tenant: 'acme', weight: 1, priority: 5, waitedMs: 0, tokens: 1200 });
 * if (answer.granted) {
 *   try { await callModel(); } finally { await capacity.release(answer.permit, { ok: true, usedTokens }); }
 * }
 * ```
 */
export class RedisModelCapacity implements ModelCapacity {
  readonly #redis: RedisConnection;
  readonly #prefix: string;
  readonly #windowMs: number;
  readonly #waiterTtlMs: number;
  readonly #leaseMs: number;
  readonly #ceilingMemoryMs: number;
  readonly #ungoverned: UngovernedModels | undefined;

  constructor(redis: RedisConnection, options: RedisModelCapacityOptions) {
    this.#redis = redis;
    this.#prefix = options.prefix;
    this.#windowMs = options.windowMs ?? 60_000;
    this.#waiterTtlMs = options.waiterTtlMs ?? 2_000;
    this.#leaseMs = options.leaseMs ?? 15_000;
    this.#ceilingMemoryMs = options.ceilingMemoryMs ?? DEFAULT_CEILING_MEMORY_MS;
    this.#ungoverned =
      options.subscriber &&
      new UngovernedModels(options.subscriber, this.#channel(), options.ungovernedTtlMs);
  }

  async tryAcquire(request: PermitRequest): Promise<PermitAnswer> {
    return this.#acquire(request, false);
  }

  async ready(
    request: PermitRequest,
  ): Promise<Extract<PermitAnswer, { granted: false }> | undefined> {
    const answer = await this.#acquire(request, true);
    return answer.granted ? undefined : answer;
  }

  /** The acquire script; a `probe` grant takes nothing (its permit is not one to release). */
  async #acquire(request: PermitRequest, probe: boolean): Promise<PermitAnswer> {
    const { model, limit } = request;
    const weight = request.weight > 0 && Number.isFinite(request.weight) ? request.weight : 1;
    const tokens = Math.max(0, request.tokens);
    const limited = !!(limit?.concurrency || limit?.requestsPerMinute || limit?.tokensPerMinute);
    if (!limited && this.#ungoverned?.has(model)) {
      return { granted: true, permit: { id: permitNonce(), model, tokens, holdsSlot: false } };
    }
    const ticket = limited ? undefined : this.#ungoverned?.ticket();
    const reply = (await this.#run(ACQUIRE, this.#keys(model), [
      model,
      request.waiterId,
      request.tenant,
      String(weight),
      String(request.priority),
      String(Math.max(0, request.waitedMs)),
      String(tokens),
      ...this.#limitArgs(limit),
      permitNonce(),
      probe ? '1' : '0',
    ])) as [number, string, number, number?];
    const [granted, value, extra, ungoverned] = reply;
    if (granted === 1) {
      if (ungoverned === 1 && !limited) this.#ungoverned?.remember(model, ticket);
      return { granted: true, permit: { id: value, model, tokens, holdsSlot: extra === 1 } };
    }
    if (!REFUSAL_REASONS.has(value))
      throw new TypeError(`model capacity: unknown refusal ${value}`);
    return {
      granted: false,
      reason: value as Extract<PermitAnswer, { granted: false }>['reason'],
      retryAfterMs: Math.max(1, extra),
    };
  }

  async renew(permit: Permit): Promise<void> {
    if (!permit.holdsSlot) return;
    await this.#run(RENEW, this.#keys(permit.model), [
      permit.model,
      permit.id,
      String(this.#windowMs),
      String(this.#leaseMs),
    ]);
  }

  async release(permit: Permit, outcome: PermitOutcome): Promise<void> {
    await this.#run(RELEASE, this.#keys(permit.model), [
      permit.model,
      permit.id,
      optional(outcome.usedTokens),
      outcome.ok ? '1' : '0',
      String(this.#windowMs),
      String(this.#leaseMs),
    ]);
  }

  async rateLimited(
    permit: Permit,
    info: RateLimitInfo,
    limit: CapacityLimit | undefined,
  ): Promise<number> {
    // This worker stops granting locally at once; the others when the script's notice reaches them.
    this.#ungoverned?.forget(permit.model);
    const pausedForMs = await this.#run(RATE_LIMITED, this.#keys(permit.model), [
      permit.model,
      permit.id,
      String(pauseMsOf(info)),
      optional(limit?.concurrency),
      String(this.#windowMs),
      String(this.#leaseMs),
      this.#channel(),
      String(this.#ceilingMemoryMs),
    ]);
    this.#ungoverned?.forget(permit.model);
    return Number(pausedForMs);
  }

  async leave(model: string, waiterId: string): Promise<void> {
    await this.#run(LEAVE, this.#keys(model), [waiterId]);
  }

  async hold(model: string, waiterId: string, forMs: number): Promise<void> {
    await this.#run(HOLD, this.#keys(model), [
      model,
      waiterId,
      String(Math.max(0, Math.round(forMs))),
      String(this.#windowMs),
      String(this.#leaseMs),
    ]);
  }

  /** A limit, the timings and the pacing every acquire-side script takes after its own arguments, in the scripts' order. */
  #limitArgs(limit: CapacityLimit | undefined): string[] {
    const pacing = requestPacing(limit, this.#windowMs);
    return [
      optional(limit?.concurrency),
      optional(limit?.requestsPerMinute),
      optional(limit?.tokensPerMinute),
      String(this.#windowMs),
      String(this.#waiterTtlMs),
      String(this.#leaseMs),
      optional(pacing?.stepMs),
      optional(pacing?.toleranceMs),
    ];
  }

  async wake(model: string, limit: CapacityLimit | undefined): Promise<string[]> {
    const woken = await this.#run(WAKE, this.#keys(model), [model, ...this.#limitArgs(limit)]);
    return (woken as unknown[]).map(String);
  }

  async snapshot(): Promise<CapacitySnapshot[]> {
    const reply = (await this.#run(
      SNAPSHOT,
      [this.#indexKey()],
      [this.#prefix, String(this.#waiterTtlMs)],
    )) as Array<string | number>;
    const snapshots: CapacitySnapshot[] = [];
    for (let i = 0; i + 4 < reply.length; i += 5) {
      const cap = Number(reply[i + 3]);
      snapshots.push({
        model: String(reply[i]),
        waiting: Number(reply[i + 1]),
        inFlight: Number(reply[i + 2]),
        ...(cap >= 0 && { concurrencyLimit: cap }),
        pausedForMs: Number(reply[i + 4]),
      });
    }
    return snapshots;
  }

  /** A model's keys in the order every model script takes them, then the index of models seen. */
  #keys(model: string): string[] {
    const base = `${this.#prefix}:cap:${model}:`;
    return [...MODEL_KEY_SUFFIXES.map((suffix) => base + suffix), this.#indexKey()];
  }

  #indexKey(): string {
    return `${this.#prefix}:cap-models`;
  }

  /** The channel on which a 429'd model is published. */
  #channel(): string {
    return `${this.#prefix}:cap-governed`;
  }

  /** Runs a script by its digest, sending its text only when the server does not have it yet. */
  async #run(s: Script, keys: string[], args: string[]): Promise<unknown> {
    try {
      return await this.#redis.evalsha(s.sha, keys.length, ...keys, ...args);
    } catch (error) {
      if (!(error instanceof Error && error.message.startsWith('NOSCRIPT'))) throw error;
      return await this.#redis.eval(s.lua, keys.length, ...keys, ...args);
    }
  }
}
