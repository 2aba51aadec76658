import { UnrecoverableError, WaitingError } from 'bullmq';
import type { Job } from 'bullmq';
import { LeaseLostError, RunNotContinuableError, type Engine, type RunStatus } from '@cairn/engine';
import type { PostgresCheckpointStore } from '@cairn/store';
import { attemptReasonFor } from './attempt-reason.js';
import { InvalidJobError } from './errors.js';
import { parseJob } from './job-catalog.js';
import { watchLease } from './lease-watch.js';
import type { WorkerLogger } from './worker-logger.js';

/** What a processed job returns (shown in Bull Board). */
export type JobResult =
  | { outcome: 'finished'; status: RunStatus }
  | { outcome: 'skipped'; status: RunStatus | 'not-found' }
  | { outcome: 'cancelled-at-claim' };

/** One execution the worker holds, for shutdown. */
export interface ActiveExecution {
  handover: AbortController;
}

/** What {@link createRunProcessor} needs. */
export interface RunProcessorDeps {
  engine: Engine;
  store: PostgresCheckpointStore;
  logger: WorkerLogger;
  leaseCheckMs: number;
  /** Executions in flight by run id. */
  active: Map<string, ActiveExecution>;
  /** True once the worker is shutting down: new pickups are handed straight back. */
  isClosing(): boolean;
}

const RESUMABLE: readonly RunStatus[] = ['PENDING', 'RUNNING', 'ERROR'];

/** The BullMQ processor: validates the job, claims and executes the run, hands it back on shutdown. */
export function createRunProcessor(deps: RunProcessorDeps) {
  const { engine, store, logger } = deps;
  return async (job: Job, token?: string): Promise<JobResult> => {
    let parsed;
    try {
      parsed = parseJob(job.name, job.data);
    } catch (error) {
      if (error instanceof InvalidJobError) throw new UnrecoverableError(error.message);
      throw error;
    }
    const { runId } = parsed.data;
    if (deps.isClosing()) return handBack(job, token, false);
    const run = await store.getRun(runId);
    if (!run) return { outcome: 'skipped', status: 'not-found' };
    if (!RESUMABLE.includes(run.status) || (run.status === 'ERROR' && parsed.name === 'run')) {
      return { outcome: 'skipped', status: run.status };
    }
    if (run.cancelRequestedAt) {
      await store.forceCancel(runId, { onlyIfEpoch: run.epoch });
      logger.info({ runId }, 'run cancelled at claim');
      return { outcome: 'cancelled-at-claim' };
    }
    const reason = attemptReasonFor(parsed, job.attemptsStarted, run);
    const input = parsed.name === 'continue' && job.attemptsStarted === 1 ? parsed.data.input : undefined;
    const controller = new AbortController();
    const handover = new AbortController();
    const watch = watchLease({
      store,
      runId,
      controller,
      intervalMs: deps.leaseCheckMs,
      onError: (error) => logger.warn({ runId, err: error }, 'lease check failed'),
    });
    deps.active.set(runId, { handover });
    if (deps.isClosing()) handover.abort();
    logger.info({ runId, jobId: job.id, reason, attemptsStarted: job.attemptsStarted }, 'executing run');
    try {
      const result = await engine.execute(runId, {
        reason,
        signal: controller.signal,
        handover: handover.signal,
        input,
        onClaim: ({ epoch }) => watch.setEpoch(epoch),
      });
      if (result.outcome === 'handed-over') return await handBack(job, token, true);
      logger.info({ runId, status: result.run.status }, 'run finished');
      return { outcome: 'finished', status: result.run.status };
    } catch (error) {
      if (error instanceof LeaseLostError) {
        logger.warn({ runId, epoch: error.epoch }, 'lease lost: another execution holds the run; stopping without writing');
        throw new UnrecoverableError(error.message);
      }
      if (error instanceof RunNotContinuableError) return { outcome: 'skipped', status: error.status as RunStatus };
      throw error;
    } finally {
      watch.stop();
      deps.active.delete(runId);
    }
  };

  async function handBack(job: Job, token: string | undefined, claimed: boolean): Promise<never> {
    const handoverAttempt = claimed ? job.attemptsStarted : (job.data as { handoverAttempt?: number }).handoverAttempt;
    if (claimed) await job.updateData({ ...(job.data as object), handoverAttempt });
    await job.moveToWait(token);
    logger.info({ runId: (job.data as { runId?: string }).runId, jobId: job.id, claimed }, 'job handed back for another worker');
    throw new WaitingError();
  }
}
