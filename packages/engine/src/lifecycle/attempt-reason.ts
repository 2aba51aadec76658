import type { AttemptReason, RunRecord } from '../run-types.js';
import type { Pickup } from './pickup-types.js';

/**
 * Why this pickup claims the run: `run` for a never-claimed run, `handover`
 * right after a graceful hand-back, `capacity` right after a park for model
 * capacity, `recovered` when the job was picked up
 * again (stalled, retried) or a `run` job finds its run claimed before, else
 * the continue job's own reason.
 */
export function attemptReasonFor(pickup: Pickup, run: RunRecord): AttemptReason {
  if (pickup.job === 'run' && run.epoch === 0) return 'run';
  const { handoverAttempt, parkedAttempt, attemptsStarted } = pickup;
  if (handoverAttempt !== undefined && attemptsStarted === handoverAttempt + 1) return 'handover';
  if (parkedAttempt !== undefined && attemptsStarted === parkedAttempt + 1) return 'capacity';
  if (attemptsStarted > 1 || pickup.job === 'run') return 'recovered';
  return pickup.reason ?? 'continue';
}
