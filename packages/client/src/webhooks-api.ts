import { segment, type HttpTransport, type RequestOptions } from './http-transport.js';

/** The event types an endpoint can take. */
export type WebhookEventType =
  | 'run.paused'
  | 'run.budget_paused'
  | 'run.completed'
  | 'run.errored'
  | 'run.cancelled'
  | 'schedule.run_skipped';

/** What `webhooks.create` sends. */
export interface CreateWebhookParams {
  /** http or https; private, loopback and link-local targets are refused unless the operator allows them. */
  url: string;
  /** The event types it takes; left out or empty: every type. */
  events?: WebhookEventType[];
  /** Only this agent's or team's runs. */
  entity?: string;
  description?: string;
  /** An admin key's: the tenant whose runs it hears of. */
  tenant?: string;
}

/** What `webhooks.update` sends. */
export interface UpdateWebhookParams {
  url?: string;
  events?: WebhookEventType[];
  description?: string;
  disabled?: boolean;
}

/** An endpoint as the API answers it (never its secret). */
export interface WebhookEndpoint {
  endpoint_id: string;
  tenant: string | null;
  url: string;
  events: WebhookEventType[];
  entity: string | null;
  description: string;
  disabled: boolean;
  created_at: string;
  updated_at: string;
}

/** A new endpoint, with its `whsec_…` secret: the only time it is given. */
export interface CreatedWebhookEndpoint extends WebhookEndpoint {
  secret: string;
}

/** One delivery attempt. */
export interface WebhookAttempt {
  /** The `webhook-id` header: the same at every attempt and redelivery of the message. */
  delivery_id: string;
  event_type: WebhookEventType;
  attempt: number;
  /** null: no answer (refused target, timeout, connection error). */
  status_code: number | null;
  latency_ms: number;
  error: string | null;
  created_at: string;
}

/** The webhooks API (`/v1/webhooks`): a tenant's key manages its tenant's endpoints only. */
export interface WebhooksApi {
  /** Adds an endpoint; keep its `secret` to verify deliveries. A bad URL or event type throws `BadRequest` naming the field. */
  create(params: CreateWebhookParams, options?: RequestOptions): Promise<CreatedWebhookEndpoint>;
  /** The key's endpoints (an admin key's: every one). */
  list(options?: RequestOptions): Promise<WebhookEndpoint[]>;
  /** One endpoint; throws `NotFound`. */
  get(endpointId: string, options?: RequestOptions): Promise<WebhookEndpoint>;
  /** Changes or disables (`disabled: true`) an endpoint; throws `NotFound`, `BadRequest`. */
  update(
    endpointId: string,
    params: UpdateWebhookParams,
    options?: RequestOptions,
  ): Promise<WebhookEndpoint>;
  /** Deletes an endpoint and its attempts; throws `NotFound`. */
  delete(endpointId: string, options?: RequestOptions): Promise<void>;
  /** The endpoint's last attempts, newest first. */
  deliveries(endpointId: string, options?: RequestOptions): Promise<WebhookAttempt[]>;
  /** Sends a delivery again (same `webhook-id`); throws `NotFound`. */
  redeliver(endpointId: string, deliveryId: string, options?: RequestOptions): Promise<void>;
}

/** The webhooks API on `http`. */
export function webhooksApi(http: HttpTransport): WebhooksApi {
  const path = (endpointId: string) => `/v1/webhooks/${segment(endpointId)}`;
  return {
    create: (params, request) => http.json('POST', '/v1/webhooks', params, request),
    list: async (request) =>
      (await http.json<{ endpoints: WebhookEndpoint[] }>('GET', '/v1/webhooks', undefined, request))
        .endpoints,
    get: (endpointId, request) => http.json('GET', path(endpointId), undefined, request),
    update: (endpointId, params, request) => http.json('PATCH', path(endpointId), params, request),
    delete: async (endpointId, request) => {
      await http.send('DELETE', path(endpointId), {
        signal: request?.signal,
        headers: request?.headers,
      });
    },
    deliveries: async (endpointId, request) =>
      (
        await http.json<{ deliveries: WebhookAttempt[] }>(
          'GET',
          `${path(endpointId)}/deliveries`,
          undefined,
          request,
        )
      ).deliveries,
    redeliver: async (endpointId, deliveryId, request) => {
      await http.json(
        'POST',
        `${path(endpointId)}/deliveries/${segment(deliveryId)}/redeliver`,
        undefined,
        request,
      );
    },
  };
}
