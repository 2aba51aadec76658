import { RUN_STATUSES, type RunStatus } from '@cairn/engine';
import type { FleetOverview } from '@cairn/store';
import { html } from 'hono/html';
import { statusBadge, type Html } from './page-layout.js';
import { usd } from './spend-notes.js';

/** A duration in seconds to two places, or "—" when there is none. */
function secondsOf(ms: number | null): string {
  return ms === null ? '—' : `${(ms / 1000).toFixed(2)} s`;
}

/** A count that opens the run list filtered to what it counts. */
function countLink(count: number, href: string, name: string): Html {
  return html`<a href="${href}" data-overview="${name}"><strong>${count}</strong></a>`;
}

/**
 * The fleet at a glance, above the run list (a tenant key's: its tenant's
 * only): top-level runs by status now, the last hour's creations and ends
 * with their p50/p95 duration, people waited for, runs parked for a model's
 * capacity by model, and what each tenant's runs cost today.
 */
export function fleetOverviewSection(overview: FleetOverview): Html {
  const { lastHour } = overview;
  const statusHref = (status: RunStatus) => `/ui?status=${status}`;
  return html`<section class="overview" id="fleet-overview">
    <div class="overview-block">
      <h2>Now</h2>
      <ul class="overview-statuses">
        ${RUN_STATUSES.map(
          (s) =>
            html`<li>
              ${statusBadge(s)} ${countLink(overview.byStatus[s], statusHref(s), `status-${s}`)}
            </li>`,
        )}
      </ul>
      <p>
        ${countLink(overview.pendingActions, '/ui?paused=1', 'pending-actions')} pending
        action${overview.pendingActions === 1 ? '' : 's'} waiting for a person
      </p>
    </div>
    <div class="overview-block">
      <h2>Last hour</h2>
      <p>
        <strong data-overview="created">${lastHour.created}</strong> created ·
        ${countLink(lastHour.completed, statusHref('COMPLETED'), 'completed')} completed ·
        ${countLink(lastHour.error, statusHref('ERROR'), 'error')} in error
      </p>
      <p>
        duration p50 <span data-overview="p50">${secondsOf(lastHour.durationP50Ms)}</span>, p95
        <span data-overview="p95">${secondsOf(lastHour.durationP95Ms)}</span>
      </p>
    </div>
    <div class="overview-block">
      <h2>Waiting for model capacity</h2>
      ${
        overview.waitingForCapacity.length === 0
          ? html`<p class="muted">none</p>`
          : html`<ul>
              ${overview.waitingForCapacity.map(
                (w) =>
                  html`<li data-waiting-model="${w.model}">
                    <code>${w.model}</code>:
                    ${countLink(w.runs, statusHref('RUNNING'), `waiting-${w.model}`)}
                    run${w.runs === 1 ? '' : 's'}
                  </li>`,
              )}
            </ul>`
      }
    </div>
    <div class="overview-block">
      <h2>Spend today (UTC)</h2>
      ${
        overview.spendToday.length === 0
          ? html`<p class="muted">nothing counted yet</p>`
          : html`<ul>
              ${overview.spendToday.map(
                (t) =>
                  html`<li data-spend-tenant="${t.tenant}">
                    <strong>${t.tenant}</strong> ${usd(t.costUsd)}
                  </li>`,
              )}
            </ul>`
      }
    </div>
  </section>`;
}
