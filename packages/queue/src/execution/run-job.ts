import { canTransition, CLAIMABLE_STATUSES, LeaseLostError, RUN_JOB_CLAIMABLE_STATUSES, RunNotContinuableError, type Engine, type RunStatus } from '@cairn/engine';
import type { ExpiryOutcome, PostgresCheckpointStore } from '@cairn/store';
import { attemptReasonFor } from '../attempt-reason.js';
import type { CatalogJob } from '../job-catalog.js';
import { watchLease } from '../lease-watch.js';
import type { WorkerLogger } from '../worker-logger.js';

/** One pickup of a catalog job, as an executor receives it (plain data: it may cross a thread). */
export interface RunJobRequest {
  job: CatalogJob;
  /** BullMQ's `attemptsStarted` for this pickup (1 on the first). */
  attemptsStarted: number;
  /** The BullMQ job id, for logs. */
  jobId?: string;
  /** The trace context the job carried (BullMQ's `telemetry.metadata`). */
  trace?: string;
}

/** How a pickup ended (shown in Bull Board as the job's return value where it completes the job). */
export type RunJobOutcome =
  | { kind: 'finished'; status: RunStatus; expiries?: ActionExpiry[] }
  | { kind: 'expired'; result: ExpiryOutcome['kind']; resume?: { rootRunId: string; pausedEpoch: number } }
  | { kind: 'skipped'; status: RunStatus | 'not-found' }
  | { kind: 'cancelled-at-claim' }
  | { kind: 'handed-over' }
  | { kind: 'lease-lost'; message: string };

/** A pending action that expires: the delayed `expire` job to enqueue for it. */
export interface ActionExpiry {
  runId: string;
  actionId: string;
  expiresAt: string;
}

/** What {@link runJob} needs. */
export interface RunJobDeps {
  engine: Engine;
  store: PostgresCheckpointStore;
  logger: WorkerLogger;
  /** How often the execution re-reads its run row (epoch, cancel). */
  leaseCheckMs: number;
}

/**
 * Executes one pickup: skips runs that need no work, cancels at claim when a
 * cancel was requested, otherwise claims and executes the run with a lease
 * watch. Aborting `handover` stops at the next checkpoint.
 */
export async function runJob(
  deps: RunJobDeps,
  request: RunJobRequest,
  handover: AbortSignal,
): Promise<RunJobOutcome> {
  const { engine, store, logger } = deps;
  const { job, attemptsStarted } = request;
  const { runId } = job.data;
  if (job.name === 'expire') {
    const expiry = await store.expireAction(job.data.actionId);
    logger.info({ runId, actionId: job.data.actionId, result: expiry.kind }, 'pending action expiry');
    return { kind: 'expired', result: expiry.kind, ...(expiry.kind === 'rejected' && expiry.resume && { resume: expiry.resume }) };
  }
  const run = await store.getRun(runId);
  if (!run) return { kind: 'skipped', status: 'not-found' };
  // A continue finding the run PAUSED is the resume its last decision enqueued (the claim checks nothing is pending).
  const resumeFromPause = job.name === 'continue' && canTransition(run.status, 'resumeFromPause');
  if (!resumeFromPause && !(job.name === 'run' ? RUN_JOB_CLAIMABLE_STATUSES : CLAIMABLE_STATUSES).includes(run.status)) {
    return { kind: 'skipped', status: run.status };
  }
  if (run.cancelRequestedAt) {
    await store.forceCancel(runId, { onlyIfEpoch: run.epoch });
    logger.info({ runId }, 'run cancelled at claim');
    return { kind: 'cancelled-at-claim' };
  }
  const reason = attemptReasonFor(job, attemptsStarted, run);
  // A continue's input is appended once: a recovered pickup resumes from the checkpoint instead.
  const input = job.name === 'continue' && attemptsStarted === 1 ? job.data.input : undefined;
  const controller = new AbortController();
  const watch = watchLease({
    store,
    runId,
    controller,
    intervalMs: deps.leaseCheckMs,
    onError: (error) => logger.warn({ runId, err: error }, 'lease check failed'),
  });
  logger.info({ runId, jobId: request.jobId, reason, attemptsStarted }, 'executing run');
  try {
    const result = await engine.execute(runId, {
      reason,
      signal: controller.signal,
      handover,
      input,
      resumeFromPause,
      onClaim: ({ epoch }) => watch.setEpoch(epoch),
    });
    if (result.outcome === 'handed-over') return { kind: 'handed-over' };
    logger.info({ runId, status: result.run.status }, 'run finished');
    if (result.run.status === 'PAUSED') return { kind: 'finished', status: 'PAUSED', expiries: await expiriesOf(store, runId) };
    return { kind: 'finished', status: result.run.status };
  } catch (error) {
    if (error instanceof LeaseLostError) {
      logger.warn({ runId, epoch: error.epoch }, 'lease lost: another execution holds the run; stopping without writing');
      return { kind: 'lease-lost', message: error.message };
    }
    if (error instanceof RunNotContinuableError) return { kind: 'skipped', status: error.status as RunStatus };
    throw error;
  } finally {
    watch.stop();
  }
}

/** The pending actions of a paused tree that expire, for their delayed `expire` jobs. */
async function expiriesOf(store: PostgresCheckpointStore, rootRunId: string): Promise<ActionExpiry[]> {
  const actions = await store.listPendingActions(rootRunId);
  return actions.flatMap((a) => (a.expiresAt ? [{ runId: rootRunId, actionId: a.actionId, expiresAt: a.expiresAt.toISOString() }] : []));
}
