import type { AttemptReason, RunRecord } from '@cairn/engine';
import type { CatalogJob } from './job-catalog.js';

/**
 * Why this pickup claims the run: `run` for a never-claimed run, `handover`
 * right after a graceful hand-back, `recovered` when the job was picked up
 * again (stalled, retried) or a `run` job finds its run claimed before, else
 * the continue job's own reason.
 */
export function attemptReasonFor(job: Exclude<CatalogJob, { name: 'expire' }>, attemptsStarted: number, run: RunRecord): AttemptReason {
  if (job.name === 'run' && run.epoch === 0) return 'run';
  const { handoverAttempt } = job.data;
  if (handoverAttempt !== undefined && attemptsStarted === handoverAttempt + 1) return 'handover';
  if (attemptsStarted > 1 || job.name === 'run') return 'recovered';
  return job.data.reason;
}
