import { FINAL_STATUSES, RUN_STATUSES, type RunStatus } from '@cairn/engine';
import { FINISHED_WINDOW_HOURS, type FleetOverview } from '@cairn/store';
import { html } from 'hono/html';
import { OVERVIEW_ASSET_FILES } from './overview-assets.js';
import { dateTimeValue } from './run-list-query.js';
import { statusBadge, UI_ASSETS_PATH, type Html } from './page-layout.js';
import { usd } from './spend-notes.js';

/** A duration in seconds to two places, or "—" when there is none. */
function secondsOf(ms: number | null): string {
  return ms === null ? '—' : `${(ms / 1000).toFixed(2)} s`;
}

/** The run list filtered by `params` (its query string: status, waiting, tenant, created_from, created_to, sort). */
function listHref(params: Record<string, string>): string {
  return `/ui?${new URLSearchParams(params).toString()}`;
}

/** The runs of a final status, most recently ended first (the list has no end-time filter). */
function endedHref(status: RunStatus): string {
  return listHref({ status, sort: 'updated' });
}

/** The runs created from `from` (ISO) for `minutes` minutes, or until now. */
function createdHref(from: string, minutes?: number): string {
  const start = new Date(from);
  return listHref({
    created_from: dateTimeValue(start),
    ...(minutes === undefined
      ? {}
      : { created_to: dateTimeValue(new Date(start.getTime() + minutes * 60_000)) }),
  });
}

/** A count that opens the run list filtered to what it counts. */
function countLink(count: number, href: string, name: string): Html {
  return html`<a href="${href}" data-overview="${name}"><strong>${count}</strong></a>`;
}

/** `HH:MM` (UTC) of an ISO instant. */
function minuteOf(iso: string): string {
  return iso.slice(11, 16);
}

const UNFINISHED = RUN_STATUSES.filter((s) => !FINAL_STATUSES.includes(s));

function statusItems(overview: FleetOverview, statuses: readonly RunStatus[]): Html {
  return html`<ul class="overview-statuses">
    ${statuses.map(
      (s) =>
        html`<li>
          ${statusBadge(s)}
          ${countLink(
            overview.byStatus[s],
            FINAL_STATUSES.includes(s) ? endedHref(s) : listHref({ status: s }),
            `status-${s}`,
          )}
        </li>`,
    )}
  </ul>`;
}

/**
 * The last hour minute by minute: the numbers in `data-series` for the chart
 * script (uPlot) to draw, and the minutes with anything in them as a table,
 * open until the chart is drawn (so a page without JavaScript shows them).
 */
function hourChart(overview: FleetOverview): Html {
  const { lastHour } = overview;
  const busy = lastHour.minutes.filter((m) => m.created + m.completed + m.error + m.recovered > 0);
  return html`<link rel="stylesheet" href="${UI_ASSETS_PATH}/${OVERVIEW_ASSET_FILES.uplotStyles}" />
    <div
      id="overview-chart"
      role="img"
      aria-label="runs per minute over the last hour"
      data-series="${JSON.stringify({ minutes: lastHour.minutes })}"
    ></div>
    <details class="overview-minutes" id="overview-minutes" open>
      <summary>per minute (UTC), the minutes with any</summary>
      ${
        busy.length === 0
          ? html`<p class="muted">nothing happened in the last hour</p>`
          : html`<table>
              <thead>
                <tr>
                  <th>minute</th>
                  <th>created</th>
                  <th>completed</th>
                  <th>error</th>
                  <th>recovered</th>
                </tr>
              </thead>
              <tbody>
                ${busy.map(
                  (m) =>
                    html`<tr data-minute="${m.at}">
                      <td><time datetime="${m.at}">${minuteOf(m.at)}</time></td>
                      <td data-kind="created">
                        ${m.created === 0 ? '0' : html`<a href="${createdHref(m.at, 1)}">${m.created}</a>`}
                      </td>
                      <td data-kind="completed">${m.completed}</td>
                      <td data-kind="error">${m.error}</td>
                      <td data-kind="recovered">${m.recovered}</td>
                    </tr>`,
                )}
              </tbody>
            </table>`
      }
    </details>
    <script src="${UI_ASSETS_PATH}/${OVERVIEW_ASSET_FILES.uplotScript}" defer></script>
    <script src="${UI_ASSETS_PATH}/${OVERVIEW_ASSET_FILES.chartScript}" defer></script>`;
}

/**
 * The fleet at a glance, above the run list (a tenant key's: its tenant's
 * only): unfinished runs by status now and the last day's finished ones,
 * people waited for, the last hour per minute (created, completed, error,
 * recovered; a chart, and a table without JavaScript) with its p50/p95
 * duration, runs parked for a model's capacity by model, and what each
 * tenant's runs cost today.
 */
export function fleetOverviewSection(overview: FleetOverview): Html {
  const { lastHour } = overview;
  return html`<link rel="stylesheet" href="${UI_ASSETS_PATH}/${OVERVIEW_ASSET_FILES.styles}" />
    <section class="overview" id="fleet-overview">
      <div class="overview-block">
        <h2>Now</h2>
        ${statusItems(overview, UNFINISHED)}
        <p>
          ${countLink(overview.pendingActions, listHref({ waiting: 'person' }), 'pending-actions')}
          pending action${overview.pendingActions === 1 ? '' : 's'} waiting for a person
        </p>
        <h2>Finished, last ${FINISHED_WINDOW_HOURS} hours</h2>
        ${statusItems(overview, FINAL_STATUSES)}
      </div>
      <div class="overview-block overview-hour">
        <h2>Last hour</h2>
        <p>
          ${countLink(lastHour.created, createdHref(lastHour.since), 'created')} created ·
          ${countLink(lastHour.completed, endedHref('COMPLETED'), 'completed')} completed ·
          ${countLink(lastHour.error, endedHref('ERROR'), 'error')} in error ·
          <strong data-overview="recovered">${lastHour.recovered}</strong> recovered after a crash
        </p>
        <p>
          duration p50 <span data-overview="p50">${secondsOf(lastHour.durationP50Ms)}</span>, p95
          <span data-overview="p95">${secondsOf(lastHour.durationP95Ms)}</span>
        </p>
        ${hourChart(overview)}
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
                      ${countLink(w.runs, listHref({ waiting: 'capacity' }), `waiting-${w.model}`)}
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
                      <a href="${listHref({ tenant: t.tenant })}"><strong>${t.tenant}</strong></a>
                      ${usd(t.costUsd)}
                      ${
                        t.byModel.length === 0
                          ? ''
                          : html`<ul class="overview-spend-models">
                              ${t.byModel.map(
                                (m) =>
                                  html`<li data-spend-model="${m.model}">
                                    <code>${m.model}</code> ${usd(m.costUsd)}
                                  </li>`,
                              )}
                            </ul>`
                      }
                    </li>`,
                )}
              </ul>`
        }
      </div>
    </section>`;
}
