import type { RateLimitInfo } from './model-capacity.js';

/** How long a model is paused after a 429 that names no reset. */
const DEFAULT_RATE_LIMIT_PAUSE_MS = 1000;

/**
 * How long the fleet remembers the concurrency cap that drew a model's 429: until then, successes
 * raise its adaptive cap (halved by the 429) back to one below that cap and no higher, rather
 * than on past it to draw the next 429 (docs/capacity.md).
 */
export const DEFAULT_CEILING_MEMORY_MS = 5 * 60_000;

/**
 * How long a provider's 429 asks the fleet to leave the model alone, in ms:
 * the longest of `retry-after(-ms)` and the reset of each exhausted kind
 * (requests or tokens at 0 remaining); failing those, the first reset named;
 * failing that, {@link DEFAULT_RATE_LIMIT_PAUSE_MS}.
 */
export function pauseMsOf(info: RateLimitInfo): number {
  const pause = Math.max(
    info.retryAfterMs ?? 0,
    info.remainingRequests === 0 ? (info.resetRequestsMs ?? 0) : 0,
    info.remainingTokens === 0 ? (info.resetTokensMs ?? 0) : 0,
  );
  const chosen =
    pause > 0 ? pause : (info.resetRequestsMs ?? info.resetTokensMs ?? DEFAULT_RATE_LIMIT_PAUSE_MS);
  return Number.isFinite(chosen) ? Math.max(0, chosen) : DEFAULT_RATE_LIMIT_PAUSE_MS;
}
