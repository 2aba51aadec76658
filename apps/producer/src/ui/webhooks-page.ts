import type { WebhookAttemptView, WebhookEndpointView } from '@cairn/store';
import { html } from 'hono/html';
import { CSRF_FIELD } from '../browser-session.js';
import { canAct, pageLayout, timeTag, type Html, type Viewer } from './page-layout.js';

/** The webhooks page's route under the pages' mount (`/ui`). */
export const WEBHOOKS_ROUTE = '/webhooks';

/** How many of an endpoint's last attempts the page shows. */
export const ATTEMPTS_SHOWN = 10;

/** An endpoint with its last attempts, newest first. */
export interface EndpointWithAttempts {
  endpoint: WebhookEndpointView;
  attempts: readonly WebhookAttemptView[];
}

/** Where a delivery's "Redeliver" button posts. */
export function redeliverPath(endpointId: string, deliveryId: string): string {
  return `/ui${WEBHOOKS_ROUTE}/${encodeURIComponent(endpointId)}/deliveries/${encodeURIComponent(deliveryId)}/redeliver`;
}

function attemptRow(endpointId: string, a: WebhookAttemptView, viewer: Viewer): Html {
  const ok = a.status_code !== null && a.status_code >= 200 && a.status_code < 300;
  return html`<tr data-delivery-id="${a.delivery_id}" data-attempt="${a.attempt}">
    <td>${timeTag(a.created_at)}</td>
    <td><code>${a.event_type}</code></td>
    <td><code>${a.delivery_id}</code></td>
    <td>${a.attempt}</td>
    <td>
      <span class="badge ${ok ? 'status-completed' : 'status-error'}">${a.status_code ?? '—'}</span>
    </td>
    <td>${a.latency_ms} ms</td>
    <td class="muted">${a.error ?? ''}</td>
    <td>
      ${
        canAct(viewer)
          ? html`<form
              method="post"
              action="${redeliverPath(endpointId, a.delivery_id)}"
              class="inline"
            >
              <input type="hidden" name="${CSRF_FIELD}" value="${viewer.csrfToken}" />
              <button type="submit" class="redeliver">Redeliver</button>
            </form>`
          : ''
      }
    </td>
  </tr>`;
}

/**
 * The webhook endpoints the viewer may see (a tenant's own; an admin's, every tenant's), each with
 * its URL, event types, state and last attempts, and a Redeliver button per delivery (a form with
 * the session's CSRF token). Secrets are never shown.
 */
export function webhooksPage(
  endpoints: readonly EndpointWithAttempts[],
  viewer: Viewer,
  notice?: string,
): Html {
  return pageLayout(
    'Webhooks',
    viewer,
    html`<h1>Webhook endpoints</h1>
      ${notice ? html`<p class="notice" id="webhooks-notice">${notice}</p>` : ''}
      ${
        endpoints.length === 0
          ? html`<p class="muted" id="no-webhooks">
              No endpoint. Add one with <code>POST /v1/webhooks</code>.
            </p>`
          : ''
      }
      ${endpoints.map(
        ({ endpoint: e, attempts }) =>
          html`<section class="webhook-endpoint" data-endpoint-id="${e.endpoint_id}">
            <h2><code>${e.url}</code></h2>
            <p>
              <code>${e.endpoint_id}</code>
              ${e.tenant === null ? '' : html` · tenant <strong>${e.tenant}</strong>`} ·
              ${e.events.length === 0 ? 'every event' : e.events.join(', ')}
              ${e.entity === null ? '' : html` · entity <strong>${e.entity}</strong>`} ·
              ${e.disabled ? html`<span class="badge status-cancelled">disabled</span>` : 'enabled'}
              ${e.description ? html` · ${e.description}` : ''}
            </p>
            ${
              attempts.length === 0
                ? html`<p class="muted">No attempt yet.</p>`
                : html`<table class="runs webhook-attempts">
                    <thead>
                      <tr>
                        <th>Time</th>
                        <th>Event</th>
                        <th>Delivery</th>
                        <th>Attempt</th>
                        <th>Status</th>
                        <th>Latency</th>
                        <th>Error</th>
                        <th></th>
                      </tr>
                    </thead>
                    <tbody>
                      ${attempts.map((a) => attemptRow(e.endpoint_id, a, viewer))}
                    </tbody>
                  </table>`
            }
          </section>`,
      )}`,
  );
}
