import type { Processor, WorkerOptions } from 'bullmq';
import type { AnyQueue, AnyWorker, BackendHandle } from './backend-handle.js';
import { openBackend, queueNameOf, type QueueConnectionOptions } from './open-backend.js';
import type { FiringTiming } from './schedule-timing.js';

/** The data of a firing job: the schedule it fires, and its time when the job was added by hand (a scheduler's job carries it in its id). */
export interface FiringJobData {
  scheduleId: string;
  fireTime?: number;
}

/** The name of every firing job. */
export const FIRING_JOB_NAME = 'fire';

/** The schedules' queue beside the run queue: `<queue>-schedules`. */
export function scheduleQueueName(runQueueName: string): string {
  return `${runQueueName}-schedules`;
}

/**
 * A firing job's options: a few tries for a store that is briefly down (the firing's handler is
 * idempotent), and removed once done so that a scheduler removed and upserted again (pause, then
 * resume) never finds a finished job under its next job's id (BullMQ issue #3063).
 */
const FIRING_JOB_OPTIONS = {
  attempts: 5,
  backoff: { type: 'exponential', delay: 1000 },
  removeOnComplete: true,
  removeOnFail: { count: 1000 },
} as const;

/**
 * The schedules' queue on Redis or on BullMQ's PostgreSQL backend: one BullMQ job scheduler per
 * active schedule (its id the schedule's), each adding a `fire` job at each firing time.
 *
 * @example
 * const schedules = await ScheduleQueue.open({ redisUrl, queueName: 'cairn' });
 * await schedules.upsert('sch_1', { cron: '0 9 * * *', timezone: 'Europe/Paris' });
 */
export class ScheduleQueue {
  private constructor(
    private readonly handle: BackendHandle,
    /** The queue's name. */
    readonly name: string,
  ) {}

  /** Connects to the backend of the run queue `options` name; throws `ServiceUnreachableError` naming Redis or Postgres. */
  static async open(options: QueueConnectionOptions): Promise<ScheduleQueue> {
    const name = scheduleQueueName(queueNameOf(options));
    return new ScheduleQueue(await openBackend(options, name), name);
  }

  /** The BullMQ queue, for Bull Board and inspection. */
  get queue(): AnyQueue {
    return this.handle.queue;
  }

  /** Creates or replaces the schedule's job scheduler. */
  async upsert(scheduleId: string, timing: FiringTiming): Promise<void> {
    const data: FiringJobData = { scheduleId };
    await this.handle.queue.upsertJobScheduler(
      scheduleId,
      'everyMs' in timing
        ? { every: timing.everyMs }
        : { pattern: timing.cron, tz: timing.timezone },
      { name: FIRING_JOB_NAME, data, opts: FIRING_JOB_OPTIONS },
    );
  }

  /** Removes the schedule's job scheduler and its next job; a firing already taken still runs (and finds the schedule gone or paused). */
  async remove(scheduleId: string): Promise<void> {
    await this.handle.queue.removeJobScheduler(scheduleId);
  }

  /** When the schedule's job scheduler fires next (ms since the epoch); undefined when it has none. */
  async next(scheduleId: string): Promise<number | undefined> {
    const scheduler = await this.handle.queue.getJobScheduler(scheduleId);
    return scheduler === undefined ? undefined : (scheduler.next ?? undefined);
  }

  /** Adds a firing job by hand, as a scheduler does: another delivery of the firing at `fireTime` (a failover, a second producer). */
  async addFiring(scheduleId: string, fireTime: number): Promise<void> {
    const data: FiringJobData = { scheduleId, fireTime };
    await this.handle.queue.add(FIRING_JOB_NAME, data, FIRING_JOB_OPTIONS);
  }

  /** A BullMQ worker on this queue. */
  createWorker(processor: Processor, options: Omit<WorkerOptions, 'connection'>): AnyWorker {
    return this.handle.createWorker(processor, options);
  }

  /** Closes the queue and the connections it opened. */
  async close(): Promise<void> {
    await this.handle.close();
  }
}

const SCHEDULER_JOB_ID = /^repeat:.+:(\d+)$/;

/** A firing job's time (ms since the epoch): from its data when added by hand, else from the id BullMQ's job scheduler gave it (`repeat:<scheduler>:<ms>`). */
export function firingTimeOf(job: { id?: string; data: FiringJobData }): number {
  if (job.data.fireTime !== undefined) return job.data.fireTime;
  const match = job.id === undefined ? null : SCHEDULER_JOB_ID.exec(job.id);
  if (!match) throw new TypeError(`firing job ${String(job.id)} carries no firing time`);
  return Number(match[1]);
}
