import { DelayedError } from 'bullmq';
import type { WebhookAttemptObservation, WebhookSettings, WorkerLogger } from '@cairn/runtime';
import type { QueueConnectionOptions } from '../open-backend.js';
import { deliverWebhook, WebhookAttemptFailedError } from './deliver-webhook.js';
import { earlierDeliveryPending, RUN_ORDER_RECHECK_MS } from './run-order.js';
import { startWebhookDispatcher } from './webhook-dispatcher.js';
import type { WebhookDeliveryStore, WebhookOutboxStore } from './webhook-ports.js';
import { WebhookQueue, type DeliveryLock } from './webhook-queue.js';

/** What {@link startWebhookDelivery} takes. */
export interface WebhookDeliveryOptions {
  connection: QueueConnectionOptions;
  store: WebhookOutboxStore & WebhookDeliveryStore;
  settings: WebhookSettings;
  /** `CAIRN_PUBLIC_URL`: the base of the links a run's events carry. */
  publicUrl?: string;
  logger: WorkerLogger;
  /** Told of each attempt (the worker's `cairn_webhook_attempts_total` and `cairn_webhook_attempt_seconds`). */
  observeAttempt?(attempt: WebhookAttemptObservation): void;
  /** The run queue's lock (`CAIRN_LOCK_MS`, `CAIRN_STALLED_INTERVAL_MS`): a delivery held by a worker that died is attempted again after about as long. */
  lock?: DeliveryLock;
}

/** Webhook delivery running in a worker process: its queue, dispatcher and delivery worker. */
export interface WebhookDelivery {
  /** The deliveries' BullMQ queue (Bull Board, metrics). */
  readonly queue: WebhookQueue['queue'];
  close(): Promise<void>;
}

/**
 * Starts webhook delivery in a worker process: a dispatcher turning recorded events into delivery
 * jobs, and a BullMQ worker making the attempts (signed, timed out, retried with capped exponential
 * backoff), each run's events to an endpoint in their order: a delivery whose run has an earlier
 * event not yet delivered (or given up) to the endpoint waits, without spending an attempt. Every
 * worker process runs both; they share the work.
 */
export async function startWebhookDelivery(
  options: WebhookDeliveryOptions,
): Promise<WebhookDelivery> {
  const queue = await WebhookQueue.open(options.connection, options.settings);
  const worker = queue.startWorker(async (job, token) => {
    if ((await earlierDeliveryPending(job.data, options.store, queue)) !== undefined) {
      // Not an attempt: the job looks again once the run's earlier event is delivered or given up.
      await job.moveToDelayed(Date.now() + RUN_ORDER_RECHECK_MS, token);
      throw new DelayedError();
    }
    const attempt = job.attemptsMade + 1;
    await deliverWebhook(job.data, attempt, {
      store: options.store,
      timeoutMs: options.settings.timeoutMs,
      allowPrivate: options.settings.allowPrivate,
      onAttempt: ({ delivered, seconds }) =>
        options.observeAttempt?.({
          outcome: delivered
            ? 'delivered'
            : attempt >= (job.opts.attempts ?? 1)
              ? 'gave_up'
              : 'failed',
          seconds,
        }),
    });
  }, options.lock);
  worker.on('failed', (job, error) => {
    if (!(error instanceof WebhookAttemptFailedError) || job === undefined) return;
    if (job.attemptsMade >= (job.opts.attempts ?? 1))
      options.logger.warn(
        { endpointId: job.data.endpointId, messageId: job.data.messageId, err: error.message },
        'webhook delivery gave up: its attempts are spent',
      );
  });
  worker.on('error', (error) => options.logger.warn({ err: error }, 'webhook worker error'));
  const dispatcher = startWebhookDispatcher({
    store: options.store,
    queue,
    pollMs: options.settings.pollMs,
    publicUrl: options.publicUrl,
    logger: options.logger,
  });
  return {
    queue: queue.queue,
    close: async () => {
      await dispatcher.stop();
      await worker.close();
      await queue.close();
    },
  };
}
