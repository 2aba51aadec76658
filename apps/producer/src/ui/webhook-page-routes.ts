import type { Context } from 'hono';
import { Hono } from 'hono';
import { requestPrincipal } from '../api-key-auth.js';
import { NotFoundError } from '../errors.js';
import { formBody } from '../form-body.js';
import { endpointInScope, type WebhookAdmin } from '../routes/webhook-routes.js';
import type { Viewer } from './page-layout.js';
import { ATTEMPTS_SHOWN, WEBHOOKS_ROUTE, webhooksPage } from './webhooks-page.js';

/** What {@link webhookPageRoutes} needs. */
export interface WebhookPageRoutesDeps {
  webhooks: WebhookAdmin;
  /** Refuses a form posted from another site's page (throws); the CSRF token is checked before any route, when sign-in is on. */
  assertSameOrigin: (c: Context) => void;
  viewerOf: (c: Context) => Viewer;
}

/**
 * `GET /webhooks` under `/ui`: the viewer's endpoints and their last attempts; `POST
 * /webhooks/:endpoint_id/deliveries/:delivery_id/redeliver`: a manual redelivery (the API's), then
 * back to the page saying so.
 */
export function webhookPageRoutes({
  webhooks,
  assertSameOrigin,
  viewerOf,
}: WebhookPageRoutesDeps): Hono {
  const app = new Hono();
  app.get(WEBHOOKS_ROUTE, async (c) => {
    const { tenantId } = requestPrincipal(c);
    const endpoints = await webhooks.listEndpoints(tenantId ?? undefined);
    const withAttempts = await Promise.all(
      endpoints.map(async (endpoint) => ({
        endpoint,
        attempts: await webhooks.listAttempts(endpoint.endpoint_id, ATTEMPTS_SHOWN),
      })),
    );
    const redelivered = c.req.query('redelivered');
    return c.html(
      webhooksPage(
        withAttempts,
        viewerOf(c),
        redelivered ? `Delivery ${redelivered} queued again.` : undefined,
      ),
    );
  });
  app.post(`${WEBHOOKS_ROUTE}/:endpoint_id/deliveries/:delivery_id/redeliver`, async (c) => {
    assertSameOrigin(c);
    await formBody(c);
    const endpointId = c.req.param('endpoint_id');
    const deliveryId = c.req.param('delivery_id');
    await endpointInScope(c, webhooks, endpointId);
    if (!(await webhooks.redeliver(endpointId, deliveryId)))
      throw new NotFoundError(`delivery ${deliveryId} of webhook endpoint ${endpointId} not found`);
    return c.redirect(`/ui${WEBHOOKS_ROUTE}?redelivered=${encodeURIComponent(deliveryId)}`, 303);
  });
  return app;
}
