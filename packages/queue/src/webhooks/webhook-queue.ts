import type { Processor } from 'bullmq';
import { webhookBackoffMs, type WebhookSettings } from '@cairn/runtime';
import type { AnyQueue, AnyWorker, BackendHandle } from '../backend-handle.js';
import { openBackend, queueNameOf, type QueueConnectionOptions } from '../open-backend.js';
import { LIVE_JOB_STATES } from '../queue-backend.js';

/** The data of a delivery job: the endpoint, the message and its body, frozen when the event was dispatched. */
export interface WebhookJobData {
  endpointId: string;
  messageId: string;
  type: string;
  /** The JSON body sent at every attempt (signed with the attempt's timestamp). */
  body: string;
  /** The run whose event it is, when it waits for the run's earlier events (not a manual redelivery). */
  runId?: string;
}

/** How long a delivery job's lock lasts, and how often stalled deliveries are looked for (BullMQ's defaults when unset: 30 s each). */
export interface DeliveryLock {
  lockDurationMs?: number;
  stalledIntervalMs?: number;
}

/** The name of every delivery job. */
const WEBHOOK_JOB_NAME = 'deliver';

/** The webhooks' queue beside the run queue: `<queue>-webhooks`. */
function webhookQueueName(runQueueName: string): string {
  return `${runQueueName}-webhooks`;
}

/** The backoff type of delivery jobs: {@link webhookBackoffMs} (exponential, capped). */
const BACKOFF_TYPE = 'webhook';

/** How many deliveries one worker process makes at once. */
const DELIVERY_CONCURRENCY = 8;

/**
 * The webhook deliveries' queue on Redis or on BullMQ's PostgreSQL backend: one job per (event,
 * endpoint), its id stable (so a dispatch repeated after a crash adds nothing), retried with
 * exponential backoff capped at `maxBackoffMs`, up to `maxAttempts`.
 */
export class WebhookQueue {
  private constructor(
    private readonly handle: BackendHandle,
    private readonly settings: WebhookSettings,
  ) {}

  /** Connects to the backend of the run queue `options` name; throws `ServiceUnreachableError` naming Redis or Postgres. */
  static async open(
    options: QueueConnectionOptions,
    settings: WebhookSettings,
  ): Promise<WebhookQueue> {
    return new WebhookQueue(
      await openBackend(options, webhookQueueName(queueNameOf(options))),
      settings,
    );
  }

  /** The BullMQ queue, for Bull Board and inspection. */
  get queue(): AnyQueue {
    return this.handle.queue;
  }

  /** Adds one job per delivery; a job whose id exists already is left as it is. */
  async add(jobs: readonly { jobId: string; data: WebhookJobData }[]): Promise<void> {
    if (jobs.length === 0) return;
    await this.handle.queue.addBulk(
      jobs.map(({ jobId, data }) => ({
        name: WEBHOOK_JOB_NAME,
        data,
        opts: {
          jobId,
          attempts: this.settings.maxAttempts,
          backoff: { type: BACKOFF_TYPE },
          removeOnComplete: { count: 1000 },
          removeOnFail: { count: 5000 },
        },
      })),
    );
  }

  /** True while job `jobId` will still be attempted (waiting, delayed for a retry, active); false once it is done, given up or gone. */
  async isLive(jobId: string): Promise<boolean> {
    return LIVE_JOB_STATES.includes(await this.handle.queue.getJobState(jobId));
  }

  /** Starts a worker making deliveries with `processor`; a dead worker's delivery is taken again after about `lock.lockDurationMs`. */
  startWorker(processor: Processor<WebhookJobData>, lock: DeliveryLock = {}): AnyWorker {
    return this.handle.createWorker(processor as Processor, {
      concurrency: DELIVERY_CONCURRENCY,
      ...(lock.lockDurationMs !== undefined && { lockDuration: lock.lockDurationMs }),
      ...(lock.stalledIntervalMs !== undefined && { stalledInterval: lock.stalledIntervalMs }),
      // A delivery is safe to attempt again (receivers deduplicate on webhook-id): never give one up for having stalled.
      maxStalledCount: 1_000,
      settings: {
        backoffStrategy: (attemptsMade) => webhookBackoffMs(attemptsMade, this.settings),
      },
    });
  }

  close(): Promise<void> {
    return this.handle.close();
  }
}
