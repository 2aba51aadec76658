import { FINAL_STATUSES, RUN_STATUSES, type RunStatus } from '@cairn/engine';
import { FINISHED_WINDOW_HOURS, type FleetOverview } from '@cairn/store';
import { html } from 'hono/html';
import { OVERVIEW_ASSET_FILES } from './overview-assets.js';
import { runListHref, type RunListQuery } from './run-list-query.js';
import { statusBadge, UI_ASSETS_PATH, type Html } from './page-layout.js';
import { usd } from './spend-notes.js';

/** A duration in seconds to two places, or "—" when there is none. */
function secondsOf(ms: number | null): string {
  return ms === null ? '—' : `${(ms / 1000).toFixed(2)} s`;
}

const byEnd = { sort: { key: 'updated', direction: 'desc' } } as const;

/** The runs that ended in `status`, most recently ended first: all of them, or those ended from `from` (ISO) for `minutes` minutes or until now. */
function endedHref(status: RunStatus | undefined, from?: string, minutes?: number): string {
  return runListHref({ status, ...byEnd, ...range('ended', from, minutes) });
}

/** The runs created from `from` (ISO) for `minutes` minutes, or until now. */
function createdHref(from: string, minutes?: number): string {
  return runListHref(range('created', from, minutes));
}

/** The runs taken over from a dead worker by an attempt started from `from` (ISO) for `minutes` minutes, or until now. */
function recoveredHref(from: string, minutes?: number): string {
  return runListHref({ recovered: true, ...range('recovered', from, minutes) });
}

/** The range filter `<name>From`/`<name>To` from `from` (ISO) for `minutes` minutes, or open-ended. */
function range(
  name: 'created' | 'ended' | 'recovered',
  from: string | undefined,
  minutes: number | undefined,
): Partial<RunListQuery> {
  if (from === undefined) return {};
  const start = new Date(from);
  const end = minutes === undefined ? undefined : new Date(start.getTime() + minutes * 60_000);
  return { [`${name}From`]: start, [`${name}To`]: end };
}

/** A minute's count: a link to its runs, or a plain 0. */
function minuteCell(count: number, href: string): Html | string {
  return count === 0 ? '0' : html`<a href="${href}">${count}</a>`;
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
            FINAL_STATUSES.includes(s) ? endedHref(s) : runListHref({ status: s }),
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
                      <td data-kind="created">${minuteCell(m.created, createdHref(m.at, 1))}</td>
                      <td data-kind="completed">
                        ${minuteCell(m.completed, endedHref('COMPLETED', m.at, 1))}
                      </td>
                      <td data-kind="error">${minuteCell(m.error, endedHref('ERROR', m.at, 1))}</td>
                      <td data-kind="recovered">
                        ${minuteCell(m.recovered, recoveredHref(m.at, 1))}
                      </td>
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
          ${countLink(overview.pendingActions, runListHref({ waiting: 'person' }), 'pending-actions')}
          pending action${overview.pendingActions === 1 ? '' : 's'} waiting for a person
        </p>
        <h2>Finished, last ${FINISHED_WINDOW_HOURS} hours</h2>
        ${statusItems(overview, FINAL_STATUSES)}
      </div>
      <div class="overview-block overview-hour">
        <h2>Last hour</h2>
        <p>
          ${countLink(lastHour.created, createdHref(lastHour.since), 'created')} created ·
          ${countLink(lastHour.completed, endedHref('COMPLETED', lastHour.since), 'completed')}
          completed · ${countLink(lastHour.error, endedHref('ERROR', lastHour.since), 'error')} in
          error · ${countLink(lastHour.recovered, recoveredHref(lastHour.since), 'recovered')}
          recovered after a crash
        </p>
        <p
          title="creation to end of the hour's COMPLETED and ERROR runs; the list shows every run ended in the hour"
        >
          duration p50
          <a href="${endedHref(undefined, lastHour.since)}" data-overview="p50"
            >${secondsOf(lastHour.durationP50Ms)}</a
          >, p95
          <a href="${endedHref(undefined, lastHour.since)}" data-overview="p95"
            >${secondsOf(lastHour.durationP95Ms)}</a
          >
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
                      ${countLink(w.runs, runListHref({ waiting: 'capacity' }), `waiting-${w.model}`)}
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
                      <a href="${runListHref({ tenant: t.tenant })}"
                        ><strong>${t.tenant}</strong></a
                      >
                      ${usd(t.costUsd)}
                      ${
                        t.byModel.length === 0
                          ? ''
                          : html`<ul class="overview-spend-models">
                              ${t.byModel.map(
                                (m) =>
                                  html`<li data-spend-model="${m.model}">
                                    <a href="${runListHref({ tenant: t.tenant })}"
                                      ><code>${m.model}</code> ${usd(m.costUsd)}</a
                                    >
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
