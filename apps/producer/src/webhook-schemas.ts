import { WEBHOOK_EVENT_TYPES } from '@cairn/store';
import { z } from 'zod';

/** Longest accepted endpoint URL, in characters. */
const MAX_URL_LENGTH = 2048;

const url = z.string().min(1).max(MAX_URL_LENGTH);
const events = z
  .array(z.enum(WEBHOOK_EVENT_TYPES))
  .max(WEBHOOK_EVENT_TYPES.length)
  .describe('The event types the endpoint takes; empty or left out: every type');
const description = z.string().max(500);

/** `POST /v1/webhooks`. */
export const createWebhookBodySchema = z.strictObject({
  url: url.describe(
    'Where deliveries go: http or https; private, loopback and link-local targets are refused unless CAIRN_WEBHOOK_ALLOW_PRIVATE=true',
  ),
  events: events.optional(),
  entity: z.string().min(1).max(200).describe("Only this agent's or team's runs").optional(),
  description: description.optional(),
  tenant: z
    .string()
    .min(1)
    .max(200)
    .describe(
      "An admin key's: the tenant whose runs it hears of (a tenant key's endpoints are its tenant's)",
    )
    .optional(),
});

/** `PATCH /v1/webhooks/:endpoint_id`. */
export const updateWebhookBodySchema = z.strictObject({
  url: url.optional(),
  events: events.optional(),
  description: description.optional(),
  disabled: z.boolean().optional(),
});

/** An endpoint as answered: never its secret. */
export const webhookEndpointSchema = z.object({
  endpoint_id: z.string(),
  tenant: z.string().nullable(),
  url: z.string(),
  events: z.array(z.string()),
  entity: z.string().nullable(),
  description: z.string(),
  disabled: z.boolean(),
  created_at: z.string(),
  updated_at: z.string(),
});

/** `POST /v1/webhooks`'s answer: the endpoint and its secret, the only time it is given. */
export const createdWebhookSchema = webhookEndpointSchema.extend({
  secret: z
    .string()
    .describe('whsec_…: verify deliveries with it (Standard Webhooks); never shown again'),
});

/** `GET /v1/webhooks`. */
export const webhookListSchema = z.object({ endpoints: z.array(webhookEndpointSchema) });

/** `GET /v1/webhooks/:endpoint_id/deliveries`: the last attempts, newest first. */
export const webhookDeliveriesSchema = z.object({
  deliveries: z.array(
    z.object({
      delivery_id: z
        .string()
        .describe('The webhook-id header: the same at every attempt and redelivery'),
      event_type: z.string(),
      attempt: z.number().int(),
      status_code: z.number().int().nullable(),
      latency_ms: z.number().int(),
      error: z.string().nullable(),
      created_at: z.string(),
    }),
  ),
});

/** `POST /v1/webhooks/:endpoint_id/deliveries/:delivery_id/redeliver`. */
export const redeliveredSchema = z.object({
  delivery_id: z.string(),
  endpoint_id: z.string(),
  queued: z.literal(true),
});
