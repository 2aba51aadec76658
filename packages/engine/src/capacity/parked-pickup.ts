import type { ParkedWaiter } from './capacity-park-signal.js';
import { parkInLine, type CapacitySettings } from './model-gate.js';
import { limitFor } from './model-limits.js';

/** A run's job back from a park for `model`, before its worker claims the run. */
export interface ParkedPickup {
  model: string;
  waiter: ParkedWaiter;
  /** How long the run has waited for its permit so far, across parks. */
  waitedMs: number;
  /**
   * Claim when the limiter tells a wait within this (ms; the run then waits for its permit in
   * place, in its gate, at its place in line). Absent: claim only when a permit can be had now.
   */
  claimWithinMs?: number;
}

/**
 * Whether a run back from a park should be claimed now (docs/capacity.md, "Back from a park"): asks
 * the limiter whether its waiter could have a permit now (`ModelCapacity.ready`, which takes
 * nothing). Resolves with undefined when it could (the pickup claims the run, which asks at once in
 * the place kept for it), else with how long to delay its job again, the waiter held in line as a
 * park holds it (a worker wakes it when its room frees): no claim, no attempt and no worker slot
 * spent on a run that would wait. A limiter error resolves undefined (the pickup goes on as
 * without this check).
 */
export async function parkAgainFor(
  settings: CapacitySettings,
  pickup: ParkedPickup,
): Promise<number | undefined> {
  const { model, waiter, waitedMs } = pickup;
  const refusal = await settings.limiter
    .ready({
      model,
      limit: limitFor(settings.limits, model),
      waiterId: waiter.id,
      tenant: waiter.tenant,
      weight: settings.tenantWeights?.get(waiter.tenant) ?? 1,
      priority: waiter.priority,
      waitedMs,
      // Tokens are estimated from the prompt, which is not read here: the ask after the claim counts them.
      tokens: 0,
    })
    .catch((error: unknown) => {
      settings.onError?.(error);
      return undefined;
    });
  if (!refusal || refusal.retryAfterMs <= (pickup.claimWithinMs ?? 0)) return undefined;
  return parkInLine(settings, model, waiter.id, refusal.retryAfterMs);
}
