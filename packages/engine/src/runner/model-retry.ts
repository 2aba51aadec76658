import type { RateLimitInfo } from '../capacity/model-capacity.js';
import type { ModelGate } from '../capacity/model-gate.js';
import { estimateTokens } from '../capacity/token-estimate.js';
import { pauseMsOf } from '../capacity/rate-limit-pause.js';
import { ModelError } from '../errors.js';
import type { Model, ModelRequest, ModelResponse } from '../model.js';
import { abortableSleep } from './abortable-sleep.js';

/** How transient model errors are retried. */
export interface RetryPolicy {
  /** @defaultValue 5 */
  maxAttempts: number;
  /** @defaultValue 500 */
  baseDelayMs: number;
  /** @defaultValue 10_000 */
  maxDelayMs: number;
}

/** Default model retry policy: 5 attempts, exponential backoff from 500 ms with full jitter. */
export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  maxAttempts: 5,
  baseDelayMs: 500,
  maxDelayMs: 10_000,
};

/** Full-jitter exponential backoff delay before retry number `attempt` (1-based). */
export function backoffDelay(policy: RetryPolicy, attempt: number, random = Math.random): number {
  const cap = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (attempt - 1));
  return Math.round(cap / 2 + (random() * cap) / 2);
}

/** What {@link respondWithRetry} reports as it goes. */
export interface ModelCallHooks {
  /** Takes permits from the fleet's model capacity; without one, requests go straight out. */
  gate?: ModelGate;
  /** A retryable failure; the call is retried after `delayMs`. */
  onRetry?: (error: ModelError, attempt: number, delayMs: number) => void;
  /** The provider answered 429: the call is asked again after `pausedMs`, never counted as a retry. */
  onRateLimited?: (error: ModelError, pausedMs: number) => void;
  /** A permit was granted after `waitedMs` of waiting. */
  onPermit?: (waitedMs: number) => void;
  /** The request goes out now (after its permit), on each try. */
  onRequest?: () => void;
}

/** The longest an ungoverned call (no gate) waits in place after a 429 that names no reset. */
const UNGOVERNED_429_WAIT_MS = 60_000;

/**
 * Calls the model: takes a permit first when a gate governs it (which may
 * park the run), retries retryable {@link ModelError}s with backoff and
 * jitter up to the policy's attempts, and treats a provider's 429 as
 * capacity, not failure: the fleet pauses the model, the call is asked
 * again (through the gate, which may park the run) and never uses the retry
 * budget. Any other error, or the last retryable one, is thrown.
 */
export async function respondWithRetry(
  model: Model,
  request: ModelRequest,
  policy: RetryPolicy,
  hooks: ModelCallHooks = {},
): Promise<ModelResponse> {
  const { gate } = hooks;
  for (let attempt = 1; ;) {
    const taken = gate && (await gate.take(model.name, () => estimateTokens(request)));
    if (taken) hooks.onPermit?.(taken.waitedMs);
    let response: ModelResponse;
    hooks.onRequest?.();
    try {
      response = taken
        ? await gate.hold(taken.permit, () => model.respond(request))
        : await model.respond(request);
    } catch (error) {
      const limited = rateLimitOf(error);
      if (limited && !request.signal?.aborted) {
        const pausedMs = taken
          ? await gate.rateLimited(taken.permit, limited.rateLimit ?? {})
          : ungovernedPauseMs(limited.rateLimit);
        hooks.onRateLimited?.(limited, pausedMs);
        if (!taken) await abortableSleep(pausedMs, request.signal);
        continue;
      }
      if (taken) await gate.release(taken.permit, undefined);
      request.signal?.throwIfAborted();
      if (!(error instanceof ModelError) || !error.retryable || attempt >= policy.maxAttempts) {
        throw error;
      }
      const delayMs = backoffDelay(policy, attempt);
      hooks.onRetry?.(error, attempt, delayMs);
      await abortableSleep(delayMs, request.signal);
      attempt += 1;
      continue;
    }
    if (taken) await gate.release(taken.permit, response);
    return response;
  }
}

/** The provider's 429, as a {@link ModelError}; undefined for any other error. */
function rateLimitOf(error: unknown): ModelError | undefined {
  return error instanceof ModelError && error.status === 429 ? error : undefined;
}

/** How long a call with no gate waits after a 429: what the provider said (capped). */
function ungovernedPauseMs(info: RateLimitInfo | undefined): number {
  return Math.min(UNGOVERNED_429_WAIT_MS, pauseMsOf(info ?? {}));
}
