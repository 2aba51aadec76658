import type { Claim } from '../checkpoint-store.js';
import { AttemptsExhaustedError } from '../errors.js';

/** Default of `CAIRN_MAX_ATTEMPTS`. */
export const DEFAULT_MAX_ATTEMPTS = 20;

/**
 * The attempts cap: a run claimed more than `maxAttempts` times since its
 * last progress (a crash loop) cannot make progress, so its execution ends it
 * in ERROR with {@link AttemptsExhaustedError} instead of running again.
 */
export function checkAttemptsCap(claim: Claim, maxAttempts: number): void {
  if (claim.claimsSinceProgress > maxAttempts) {
    throw new AttemptsExhaustedError(claim.run.runId, claim.claimsSinceProgress, maxAttempts);
  }
}
