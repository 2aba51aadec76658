/** One delivery to make: one event to one endpoint (the store's `WebhookDelivery`). */
export interface WebhookDeliveryRecord {
  /** Stable per (event, endpoint): the delivery job's id. */
  jobId: string;
  /** The `webhook-id` header: the same for every attempt and redelivery of the message. */
  messageId: string;
  endpointId: string;
  type: string;
  runId: string | null;
  occurredAt: Date;
  payload: Record<string, unknown>;
  /** A manual redelivery: sent as asked, without waiting for the run's earlier events. */
  redelivery: boolean;
}

/** What a delivery reads and records (`PostgresWebhookStore` implements it). */
export interface WebhookDeliveryStore {
  /** Where a delivery to the endpoint goes now; undefined once it is deleted. */
  deliveryTarget(
    endpointId: string,
  ): Promise<{ url: string; secret: string; disabled: boolean } | undefined>;
  /** The jobs of the first deliveries to `endpointId` of the run's events before message `messageId`, oldest first; `dispatched` false: not yet turned into jobs. */
  earlierDeliveries(
    runId: string,
    messageId: string,
    endpointId: string,
  ): Promise<{ jobId: string; dispatched: boolean }[]>;
  recordAttempt(attempt: {
    endpointId: string;
    messageId: string;
    eventType: string;
    attempt: number;
    statusCode: number | null;
    latencyMs: number;
    error: string | null;
  }): Promise<void>;
}

/** What the dispatcher reads (`PostgresWebhookStore` implements it). */
export interface WebhookOutboxStore {
  /** Turns up to `limit` recorded events into deliveries handed to `deliver`, then marks them dispatched; returns how many events it took. */
  dispatchPending(
    limit: number,
    deliver: (deliveries: WebhookDeliveryRecord[]) => Promise<void>,
  ): Promise<number>;
}
