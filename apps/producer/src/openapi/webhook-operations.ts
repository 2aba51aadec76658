import type { z } from 'zod';
import {
  createdWebhookSchema,
  createWebhookBodySchema,
  redeliveredSchema,
  updateWebhookBodySchema,
  webhookDeliveriesSchema,
  webhookEndpointSchema,
  webhookListSchema,
} from '../webhook-schemas.js';
import type { ApiOperation, ApiParameter } from './api-operations.js';

const BODY_ERRORS: Readonly<Record<number, string>> = {
  400: 'invalid_body (with issues naming each field: url, events, ...), or invalid_json',
  413: 'payload_too_large: the body is over the limit (default 1 MiB)',
  415: 'unsupported_media_type: a non-empty body that is not application/json',
};

const endpointId: ApiParameter = {
  name: 'endpoint_id',
  in: 'path',
  required: true,
  description: "The endpoint's id; another tenant's endpoint is a 404",
  schema: { type: 'string' },
};

const NOT_FOUND = 'not_found: no such endpoint for this tenant';

/** The webhook bodies' and answers' schemas, named in the document's components. */
export const WEBHOOK_SCHEMAS: Readonly<Record<string, z.ZodType>> = {
  CreateWebhookBody: createWebhookBodySchema,
  UpdateWebhookBody: updateWebhookBodySchema,
  WebhookEndpoint: webhookEndpointSchema,
  CreatedWebhookEndpoint: createdWebhookSchema,
  WebhookEndpointList: webhookListSchema,
  WebhookDeliveries: webhookDeliveriesSchema,
  WebhookRedelivery: redeliveredSchema,
};

/** The `/v1/webhooks` operations. */
export const WEBHOOK_OPERATIONS: readonly ApiOperation[] = [
  {
    method: 'post',
    path: '/v1/webhooks',
    operationId: 'createWebhookEndpoint',
    tag: 'webhooks',
    summary: 'Add a webhook endpoint',
    description:
      "Deliveries are signed per Standard Webhooks with the endpoint's secret, answered here once and never again.",
    body: { schema: createWebhookBodySchema, required: true },
    answers: { 201: { description: 'Created, with its secret', json: createdWebhookSchema } },
    errors: { ...BODY_ERRORS, 403: 'forbidden: a tenant key naming another tenant' },
  },
  {
    method: 'get',
    path: '/v1/webhooks',
    operationId: 'listWebhookEndpoints',
    tag: 'webhooks',
    summary: "List the key's tenant's webhook endpoints (an admin key: every one)",
    answers: { 200: { description: 'The endpoints', json: webhookListSchema } },
    errors: {},
  },
  {
    method: 'get',
    path: '/v1/webhooks/{endpoint_id}',
    operationId: 'getWebhookEndpoint',
    tag: 'webhooks',
    summary: 'Read a webhook endpoint',
    parameters: [endpointId],
    answers: { 200: { description: 'The endpoint', json: webhookEndpointSchema } },
    errors: { 404: NOT_FOUND },
  },
  {
    method: 'patch',
    path: '/v1/webhooks/{endpoint_id}',
    operationId: 'updateWebhookEndpoint',
    tag: 'webhooks',
    summary: 'Change a webhook endpoint (url, events, description, disabled)',
    parameters: [endpointId],
    body: { schema: updateWebhookBodySchema, required: true },
    answers: { 200: { description: 'The endpoint', json: webhookEndpointSchema } },
    errors: { ...BODY_ERRORS, 404: NOT_FOUND },
  },
  {
    method: 'delete',
    path: '/v1/webhooks/{endpoint_id}',
    operationId: 'deleteWebhookEndpoint',
    tag: 'webhooks',
    summary: 'Delete a webhook endpoint and its attempts',
    parameters: [endpointId],
    answers: { 204: { description: 'Deleted', empty: true } },
    errors: { 404: NOT_FOUND },
  },
  {
    method: 'get',
    path: '/v1/webhooks/{endpoint_id}/deliveries',
    operationId: 'listWebhookDeliveries',
    tag: 'webhooks',
    summary: "An endpoint's last delivery attempts, newest first",
    parameters: [endpointId],
    answers: { 200: { description: 'The last attempts', json: webhookDeliveriesSchema } },
    errors: { 404: NOT_FOUND },
  },
  {
    method: 'post',
    path: '/v1/webhooks/{endpoint_id}/deliveries/{delivery_id}/redeliver',
    operationId: 'redeliverWebhook',
    tag: 'webhooks',
    summary: 'Deliver a message to the endpoint again (same webhook-id)',
    parameters: [
      endpointId,
      {
        name: 'delivery_id',
        in: 'path',
        required: true,
        description: 'A delivery_id the endpoint has attempts of (msg_…)',
        schema: { type: 'string' },
      },
    ],
    answers: { 202: { description: 'Queued', json: redeliveredSchema } },
    errors: { 404: `${NOT_FOUND}, or no attempt of that delivery` },
  },
];
