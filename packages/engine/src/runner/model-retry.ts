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

/**
 * Calls the model, retrying retryable {@link ModelError}s with backoff and
 * jitter; any other error, or the last retryable one, is thrown.
 */
export async function respondWithRetry(
  model: Model,
  request: ModelRequest,
  policy: RetryPolicy,
  onRetry?: (error: ModelError, attempt: number, delayMs: number) => void,
): Promise<ModelResponse> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await model.respond(request);
    } catch (error) {
      request.signal?.throwIfAborted();
      if (!(error instanceof ModelError) || !error.retryable || attempt >= policy.maxAttempts) {
        throw error;
      }
      const delayMs = backoffDelay(policy, attempt);
      onRetry?.(error, attempt, delayMs);
      await abortableSleep(delayMs, request.signal);
    }
  }
}
