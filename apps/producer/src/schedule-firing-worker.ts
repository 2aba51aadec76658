import { DelayedError, type Job } from 'bullmq';
import { firingTimeOf, type FiringJobData, type ScheduleQueue } from '@cairn/queue';
import type { Logger } from 'pino';
import { z } from 'zod';
import type { ScheduleService } from './schedule-service.js';

/** How often a buffered firing looks again whether the run before it has ended, in ms. */
export const BUFFERED_FIRING_RECHECK_MS = 1000;

const firingJobSchema = z.object({
  scheduleId: z.string().min(1),
  fireTime: z.number().int().nonnegative().optional(),
});

/** What {@link startScheduleFiringWorker} takes. */
export interface ScheduleFiringWorkerOptions {
  queue: ScheduleQueue;
  service: ScheduleService;
  /** BullMQ lock duration: a dead producer's firing is taken by another after about this long. */
  lockDurationMs: number;
  stalledIntervalMs: number;
  logger?: Logger;
}

/** A started firing worker. */
export interface ScheduleFiringWorker {
  close(): Promise<void>;
}

/**
 * Takes the schedules' firing jobs in this producer: each is one delivery of a firing, handled by
 * {@link ScheduleService.fire}, so a job delivered twice (a stalled job taken again after a crash,
 * a second producer) starts one run. A buffered firing goes back to the delayed set and looks
 * again every {@link BUFFERED_FIRING_RECHECK_MS}.
 */
export function startScheduleFiringWorker(
  options: ScheduleFiringWorkerOptions,
): ScheduleFiringWorker {
  const { service, logger } = options;
  const worker = options.queue.createWorker(
    async (job: Job<FiringJobData>, token?: string) => {
      const data = firingJobSchema.parse(job.data);
      const fireTime = new Date(firingTimeOf({ id: job.id, data }));
      const result = await service.fire(data.scheduleId, fireTime);
      logger?.info(
        { scheduleId: data.scheduleId, fireTime: fireTime.toISOString(), ...result },
        'schedule fired',
      );
      if (result.outcome === 'waiting') {
        await job.moveToDelayed(Date.now() + BUFFERED_FIRING_RECHECK_MS, token);
        throw new DelayedError();
      }
      return result;
    },
    {
      concurrency: 4,
      lockDuration: options.lockDurationMs,
      stalledInterval: options.stalledIntervalMs,
      // A firing is safe to deliver again: never fail one for having stalled.
      maxStalledCount: 1_000,
    },
  );
  worker.on('error', (error) => logger?.error({ err: error }, 'schedule firing worker error'));
  worker.on('failed', (job, error) =>
    logger?.error({ err: error, jobId: job?.id }, 'schedule firing failed'),
  );
  return { close: () => worker.close() };
}
