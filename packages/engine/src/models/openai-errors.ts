import { APIConnectionError, APIError, APIUserAbortError } from 'openai';
import { ModelError } from '../errors.js';
import { describeBody } from './openai-reply.js';
import { rateLimitInfoOf } from './rate-limit-headers.js';

/** HTTP statuses worth retrying besides 5xx: timeout, conflict, rate limit. */
const RETRYABLE_STATUSES: ReadonlySet<number> = new Set([408, 409, 429]);

/**
 * The code of OpenAI's 429 for an account out of credit: a billing failure,
 * not a rate limit, so no wait makes room.
 */
const INSUFFICIENT_QUOTA = 'insufficient_quota';

/**
 * Turns an error thrown by the openai client into what an adapter should throw:
 * the abort reason when `signal` was aborted (so cancellation propagates as an
 * abort, never as a retryable failure), else a {@link ModelError}. A 429 carries
 * what its rate-limit headers said as `rateLimit` (the runner waits for
 * capacity instead of counting a failure), except OpenAI's
 * `insufficient_quota`, which fails without retrying.
 */
export function toModelError(error: unknown, signal: AbortSignal | undefined): unknown {
  if (signal?.aborted) return signal.reason ?? error;
  if (error instanceof ModelError) return error;
  if (error instanceof APIUserAbortError) return new DOMException(error.message, 'AbortError');
  if (error instanceof APIConnectionError) {
    return new ModelError(`model request failed: ${error.message}`, true, undefined, {
      cause: error,
    });
  }
  if (error instanceof APIError) {
    const code = typeof error.code === 'string' ? ` (${error.code})` : '';
    const outOfCredit = error.code === INSUFFICIENT_QUOTA || error.type === INSUFFICIENT_QUOTA;
    return new ModelError(
      `model request failed: ${answerOf(error)}${code}`,
      !outOfCredit && isRetryable(error),
      error.status,
      error.status === 429 && !outOfCredit
        ? { cause: error, rateLimit: rateLimitInfoOf(error.headers ?? new Headers()) }
        : { cause: error },
    );
  }
  return malformedResponse(error instanceof Error ? error.message : String(error), error);
}

/** A non-retryable {@link ModelError} for a response the adapter cannot read. */
export function malformedResponse(detail: string, cause?: unknown): ModelError {
  return new ModelError(`malformed model response: ${detail}`, false, undefined, { cause });
}

/**
 * The client's message, except for a body that is not JSON (a gateway's HTML
 * error page), which the client quotes whole: its status, content type and
 * first bytes instead.
 */
function answerOf(error: APIError): string {
  const contentType = error.headers?.get('content-type') ?? '';
  if (error.status === undefined || error.error !== undefined || /json/i.test(contentType))
    return error.message;
  const prefix = `${error.status} `;
  if (!error.message.startsWith(prefix) || error.message === `${prefix}status code (no body)`)
    return error.message;
  return describeBody(error.status, contentType, error.message.slice(prefix.length));
}

function isRetryable(error: APIError): boolean {
  const shouldRetry = error.headers?.get('x-should-retry');
  if (shouldRetry === 'true') return true;
  if (shouldRetry === 'false') return false;
  const status = error.status ?? 0;
  return RETRYABLE_STATUSES.has(status) || status >= 500;
}
