import type { Job, JobState, Processor, WorkerOptions } from 'bullmq';
import { currentTraceMetadata, type QueueBackendKind } from '@cairn/runtime';
import type { AnyQueue, AnyWorker, BackendHandle, WorkerHooks } from './backend-handle.js';
import { FairLine } from './fair-line.js';
import { jobOptionsFor, joinsFairLine, runDedupId, type CatalogJob } from './job-catalog.js';
import { openBackend, queueNameOf, type QueueConnectionOptions } from './open-backend.js';

/** Options of {@link RunQueue.open}. */
export interface RunQueueOptions extends QueueConnectionOptions {
  /** `CAIRN_TENANT_WEIGHTS`: each tenant's share of the queue's worker slots; a tenant not listed weighs 1. @defaultValue {} */
  tenantWeights?: Readonly<Record<string, number>>;
}

/** Job states in which a job still holds its run (it will run, or is running). */
export const LIVE_JOB_STATES: readonly (JobState | 'unknown')[] = [
  'active',
  'waiting',
  'delayed',
  'prioritized',
  'waiting-children',
];

/**
 * The run queue on Redis or on BullMQ's PostgreSQL backend: adds catalog jobs
 * and finds the live job of a run. `queue` is the BullMQ `Queue` (for Bull Board).
 *
 * @example
 * const runQueue = await RunQueue.open({ redisUrl: process.env.REDIS_URL });
 * await runQueue.add({ name: 'run', data: { runId } });
 */
export class RunQueue {
  private fairLine?: Promise<FairLine>;

  private constructor(
    private readonly handle: BackendHandle,
    /** The queue's name. */
    readonly name: string,
    private readonly tenantWeights: Readonly<Record<string, number>>,
  ) {}

  /** Connects to the backend; throws `ServiceUnreachableError` naming Redis or Postgres. */
  static async open(options: RunQueueOptions): Promise<RunQueue> {
    const name = queueNameOf(options);
    const handle = await openBackend(options, name);
    return new RunQueue(handle, name, options.tenantWeights ?? {});
  }

  /** `redis` or `postgres`. */
  get backend(): QueueBackendKind {
    return this.handle.kind;
  }

  /** The BullMQ queue, for Bull Board and inspection. */
  get queue(): AnyQueue {
    return this.handle.queue;
  }

  /**
   * Adds a validated job; while the run has a live job, returns that job
   * instead (deduplication). A job with a tenant takes its slot in the
   * tenant's fair line as its BullMQ priority.
   */
  async add(job: CatalogJob): Promise<Job> {
    // The caller's trace context rides in BullMQ's own field for it, to the worker that runs the job.
    const metadata = currentTraceMetadata();
    const queuePriority = joinsFairLine(job)
      ? await (
          await this.openFairLine()
        ).queuePriorityFor(job.data.tenant, job.data.priority ?? DEFAULT_RUN_PRIORITY)
      : undefined;
    return this.handle.queue.add(job.name, job.data, {
      ...jobOptionsFor(job, queuePriority),
      ...(metadata && { telemetry: { metadata } }),
    });
  }

  private openFairLine(): Promise<FairLine> {
    this.fairLine ??= this.handle
      .openClockBook()
      .then((book) => new FairLine(book, this.tenantWeights));
    // A failed open is tried again by the next add.
    this.fairLine.catch(() => (this.fairLine = undefined));
    return this.fairLine;
  }

  /**
   * Adds a job whose id an earlier job of the run may still hold, ended
   * (failed after its retries, or completed without finishing the run): that
   * one is removed first, since BullMQ ignores an add under an existing id.
   * For the reconciler's resume of a paused run, whose job id is one per
   * pause; while the run has a live job, returns that job instead.
   */
  async addReplacingEnded(job: CatalogJob): Promise<Job> {
    const { jobId } = jobOptionsFor(job);
    const earlier = jobId === undefined ? undefined : await this.handle.queue.getJob(jobId);
    if (earlier && !LIVE_JOB_STATES.includes(await earlier.getState())) await earlier.remove();
    return this.add(job);
  }

  /** The run's job that is waiting, delayed or active, if any. */
  async liveJobFor(runId: string): Promise<{ job: Job; state: JobState | 'unknown' } | undefined> {
    const jobId = await this.handle.queue.getDeduplicationJobId(runDedupId(runId));
    if (!jobId) return undefined;
    const job = await this.handle.queue.getJob(jobId);
    if (!job) return undefined;
    const state = await job.getState();
    return LIVE_JOB_STATES.includes(state) ? { job, state } : undefined;
  }

  /** A BullMQ worker on the same backend and queue. */
  createWorker(
    processor: Processor,
    options: Omit<WorkerOptions, 'connection'>,
    hooks?: WorkerHooks,
  ): AnyWorker {
    return this.handle.createWorker(processor, options, hooks);
  }

  /** Closes the queue and the connections it opened. */
  async close(): Promise<void> {
    const fairLine = await this.fairLine?.catch(() => undefined);
    await fairLine?.close();
    await this.handle.close();
  }
}

/** A run's priority when it was created without one (as the store's column defaults). */
const DEFAULT_RUN_PRIORITY = 5;
