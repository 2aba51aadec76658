import type { WebhookDeliveryStore } from './webhook-ports.js';
import type { WebhookJobData, WebhookQueue } from './webhook-queue.js';

/** How long a delivery waiting for its run's earlier event stays delayed before it looks again, in ms. */
export const RUN_ORDER_RECHECK_MS = 250;

/**
 * The earlier delivery a run's event waits for, if any (docs/operations.md "Webhooks", in order per
 * run): the first of the run's events recorded before it, to the same endpoint, that is not yet
 * turned into a job, or whose job will still be attempted (waiting, retrying, active). A job that
 * was delivered, gave up its attempts, or is gone does not hold the run's later events. A manual
 * redelivery (no `runId`) waits for nothing.
 */
export async function earlierDeliveryPending(
  data: WebhookJobData,
  store: Pick<WebhookDeliveryStore, 'earlierDeliveries'>,
  queue: Pick<WebhookQueue, 'isLive'>,
): Promise<string | undefined> {
  if (data.runId === undefined) return undefined;
  const earlier = await store.earlierDeliveries(data.runId, data.messageId, data.endpointId);
  for (const delivery of earlier)
    if (!delivery.dispatched || (await queue.isLive(delivery.jobId))) return delivery.jobId;
  return undefined;
}
