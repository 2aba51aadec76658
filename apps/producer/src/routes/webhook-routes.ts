import type { PostgresWebhookStore, WebhookEndpointView } from '@cairn/store';
import { webhookUrlProblem } from '@cairn/runtime';
import { Hono, type Context } from 'hono';
import { mayAccess, requestPrincipal } from '../api-key-auth.js';
import { ForbiddenError, InvalidBodyError, NotFoundError } from '../errors.js';
import { jsonBody } from '../json-body.js';
import { createWebhookBodySchema, updateWebhookBodySchema } from '../webhook-schemas.js';

/** The store's webhook endpoints, as the routes use them. */
export type WebhookAdmin = Pick<
  PostgresWebhookStore,
  | 'createEndpoint'
  | 'listEndpoints'
  | 'getEndpoint'
  | 'updateEndpoint'
  | 'deleteEndpoint'
  | 'listAttempts'
  | 'redeliver'
>;

/** What {@link webhookRoutes} needs. */
export interface WebhookRoutesDeps {
  webhooks: WebhookAdmin;
  /** `CAIRN_WEBHOOK_ALLOW_PRIVATE`: endpoints may target private, loopback and link-local addresses. */
  allowPrivate: boolean;
}

/**
 * The endpoint `endpoint_id` if the request's key may manage it: an admin key any, a tenant key
 * its tenant's; another tenant's is the same 404 as one that does not exist.
 */
export async function endpointInScope(
  c: Context,
  webhooks: Pick<WebhookAdmin, 'getEndpoint'>,
  endpointId: string,
): Promise<WebhookEndpointView> {
  const endpoint = await webhooks.getEndpoint(endpointId);
  if (!endpoint || !mayAccess(requestPrincipal(c), endpoint.tenant))
    throw new NotFoundError(`webhook endpoint ${endpointId} not found`);
  return endpoint;
}

/**
 * `/v1/webhooks`: a tenant's endpoints (`POST` answers the secret, once), `GET` list and one,
 * `PATCH`, `DELETE`, the last attempts (`GET :endpoint_id/deliveries`) and a manual redelivery.
 * Admin keys manage every tenant's; a tenant key its own tenant's.
 */
export function webhookRoutes({ webhooks, allowPrivate }: WebhookRoutesDeps): Hono {
  const app = new Hono();
  const checkUrl = async (url: string) => {
    const problem = await webhookUrlProblem(url, { allowPrivate });
    if (problem !== undefined) throw new InvalidBodyError('url', problem);
  };

  app.post('/webhooks', async (c) => {
    const body = await jsonBody(c, createWebhookBodySchema);
    const principal = requestPrincipal(c);
    if (
      body.tenant !== undefined &&
      principal.tenantId !== null &&
      body.tenant !== principal.tenantId
    )
      throw new ForbiddenError("tenant: a tenant key's endpoints are its own tenant's");
    await checkUrl(body.url);
    const { endpoint, secret } = await webhooks.createEndpoint({
      tenantId: principal.tenantId ?? body.tenant ?? null,
      url: body.url,
      events: body.events ?? [],
      entityName: body.entity,
      description: body.description,
    });
    return c.json({ ...endpoint, secret }, 201);
  });

  app.get('/webhooks', async (c) => {
    const { tenantId } = requestPrincipal(c);
    return c.json({ endpoints: await webhooks.listEndpoints(tenantId ?? undefined) });
  });

  app.get('/webhooks/:endpoint_id', async (c) =>
    c.json(await endpointInScope(c, webhooks, c.req.param('endpoint_id'))),
  );

  app.patch('/webhooks/:endpoint_id', async (c) => {
    const body = await jsonBody(c, updateWebhookBodySchema);
    const endpointId = c.req.param('endpoint_id');
    await endpointInScope(c, webhooks, endpointId);
    if (body.url !== undefined) await checkUrl(body.url);
    const updated = await webhooks.updateEndpoint(endpointId, body);
    if (!updated) throw new NotFoundError(`webhook endpoint ${endpointId} not found`);
    return c.json(updated);
  });

  app.delete('/webhooks/:endpoint_id', async (c) => {
    const endpointId = c.req.param('endpoint_id');
    await endpointInScope(c, webhooks, endpointId);
    await webhooks.deleteEndpoint(endpointId);
    return c.body(null, 204);
  });

  app.get('/webhooks/:endpoint_id/deliveries', async (c) => {
    const endpointId = c.req.param('endpoint_id');
    await endpointInScope(c, webhooks, endpointId);
    return c.json({ deliveries: await webhooks.listAttempts(endpointId) });
  });

  app.post('/webhooks/:endpoint_id/deliveries/:delivery_id/redeliver', async (c) => {
    const endpointId = c.req.param('endpoint_id');
    const deliveryId = c.req.param('delivery_id');
    await endpointInScope(c, webhooks, endpointId);
    if (!(await webhooks.redeliver(endpointId, deliveryId)))
      throw new NotFoundError(`delivery ${deliveryId} of webhook endpoint ${endpointId} not found`);
    return c.json({ delivery_id: deliveryId, endpoint_id: endpointId, queued: true as const }, 202);
  });

  return app;
}
