import type { CapacityLimit } from './model-capacity.js';

/**
 * The share of a window's requests that may be granted at once, beyond the paced rate (the
 * burst allowance): 1/20, so 25 of 500 requests a minute.
 */
const BURST_SHARE = 1 / 20;

/** The least burst allowance, in requests: a limit of 2 a window is granted as before, both at once. */
const MIN_BURST = 2;

/** How a model's requests per window are paced: one rule, which both limiters apply. */
export interface RequestPacing {
  /** The spacing of grants at the paced rate: the window over its requests limit, in ms. */
  stepMs: number;
  /** How far ahead of the paced time a grant may go (the burst allowance, `(burst - 1) * stepMs`), in ms. */
  toleranceMs: number;
}

/**
 * Grants paced across a rate window rather than spent in a burst (docs/capacity.md, "Paced
 * grants"): with a requests-per-minute limit, the limiters keep a paced time per model (the
 * generic cell rate algorithm's theoretical arrival time); a grant may go while that time is at
 * most `toleranceMs` ahead of now, and moves it `stepMs` on from the later of itself and now. A
 * refused waiter is told the time of its paced slot. The window's count still bounds the grants;
 * tokens per minute are not paced. Undefined: no requests limit, nothing paced.
 */
export function requestPacing(
  limit: CapacityLimit | undefined,
  windowMs: number,
): RequestPacing | undefined {
  const rpm = limit?.requestsPerMinute;
  if (!rpm || rpm <= 0) return undefined;
  const stepMs = windowMs / rpm;
  const burst = Math.max(MIN_BURST, Math.ceil(rpm * BURST_SHARE));
  return { stepMs, toleranceMs: (burst - 1) * stepMs };
}
