import type { WorkerLogger } from '@cairn/runtime';
import type { WebhookDeliveryRecord, WebhookOutboxStore } from './webhook-ports.js';
import type { WebhookJobData, WebhookQueue } from './webhook-queue.js';

/** How many recorded events one dispatch takes at most. */
const DISPATCH_BATCH = 100;

/** What {@link startWebhookDispatcher} takes. */
export interface WebhookDispatcherOptions {
  store: WebhookOutboxStore;
  queue: Pick<WebhookQueue, 'add'>;
  /** How often it looks for recorded events. */
  pollMs: number;
  /** The producer's address as people reach it (`CAIRN_PUBLIC_URL`): the links' base; unset: paths. */
  publicUrl?: string;
  logger: WorkerLogger;
}

/** A running dispatcher. */
export interface WebhookDispatcher {
  /** Stops after the dispatch in progress. */
  stop(): Promise<void>;
}

/**
 * The body every attempt of a delivery sends, per Standard Webhooks: `{ type, timestamp, data }`,
 * `timestamp` when the event was recorded, and a run's `data` with the links a person follows (its
 * run page, its decisions endpoint, the run in the API).
 */
function webhookBody(delivery: WebhookDeliveryRecord, publicUrl = ''): string {
  const base = publicUrl.replace(/\/+$/, '');
  const runId = delivery.runId;
  const links =
    runId === null
      ? undefined
      : {
          run_page: `${base}/ui/runs/${encodeURIComponent(runId)}`,
          run: `${base}/v1/runs/${encodeURIComponent(runId)}`,
          decisions: `${base}/v1/runs/${encodeURIComponent(runId)}/decisions`,
        };
  return JSON.stringify({
    type: delivery.type,
    timestamp: delivery.occurredAt.toISOString(),
    data: { ...delivery.payload, ...(links && { links }) },
  });
}

/**
 * Turns recorded webhook events into delivery jobs, every `pollMs`, in every worker process: each
 * dispatch takes its own events (`for update skip locked`) and the jobs' ids are stable, so
 * dispatchers running side by side never deliver an event twice, and a crash between adding the
 * jobs and marking the events adds nothing the next time.
 */
export function startWebhookDispatcher(options: WebhookDispatcherOptions): WebhookDispatcher {
  const deliver = (deliveries: WebhookDeliveryRecord[]) =>
    options.queue.add(
      deliveries.map((d) => ({
        jobId: d.jobId,
        data: {
          endpointId: d.endpointId,
          messageId: d.messageId,
          type: d.type,
          body: webhookBody(d, options.publicUrl),
          ...(d.runId !== null && !d.redelivery && { runId: d.runId }),
        } satisfies WebhookJobData,
      })),
    );
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> = Promise.resolve();
  const tick = async () => {
    try {
      while (
        !stopped &&
        (await options.store.dispatchPending(DISPATCH_BATCH, deliver)) === DISPATCH_BATCH
      );
    } catch (error) {
      options.logger.warn({ err: error }, 'webhook dispatch failed: retried at the next poll');
    }
    if (!stopped) timer = setTimeout(() => void (running = tick()), options.pollMs);
  };
  running = tick();
  return {
    stop: async () => {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}
