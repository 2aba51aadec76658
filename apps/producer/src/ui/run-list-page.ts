import { RUN_STATUSES, type RunStatus } from '@cairn/engine';
import type { FleetOverview, RunListPage } from '@cairn/store';
import { fleetOverviewSection } from './fleet-overview-section.js';
import { html } from 'hono/html';
import { pageLayout, statusBadge, timeTag, type Html, type Viewer } from './page-layout.js';
import { waitingNote } from './run-waiting.js';
import { tokensText, usd } from './spend-notes.js';

/** The run list's filter, as the query string gives it. */
export interface RunListQuery {
  status?: RunStatus;
  entity?: string;
  paused: boolean;
  /** 1-based. */
  page: number;
}

/** Runs per page of the list. */
export const RUNS_PER_PAGE = 50;

/** The status a paused-only list shows. */
export const PAUSED_STATUS: RunStatus = 'PAUSED';

/** The fleet overview above the run list: a filter form, a table of runs (newest first) and newer/older links. */
export function runListPage(
  query: RunListQuery,
  page: RunListPage,
  viewer: Viewer,
  overview: FleetOverview,
): Html {
  const link = (target: number) => `/ui?${listSearch({ ...query, page: target })}`;
  return pageLayout(
    'Runs',
    viewer,
    html`${fleetOverviewSection(overview)}
      <h1>Runs</h1>
      <form class="filters" method="get" action="/ui" id="run-filters">
        <label
          >Status
          <select name="status">
            <option value="">any</option>
            ${RUN_STATUSES.map(
              (s) =>
                html`<option value="${s}" ${query.status === s ? 'selected' : ''}>${s}</option>`,
            )}
          </select></label
        >
        <label
          >Entity <input name="entity" value="${query.entity ?? ''}" placeholder="research-team"
        /></label>
        <label
          ><input type="checkbox" name="paused" value="1" ${query.paused ? 'checked' : ''} /> paused
          only</label
        >
        <button type="submit">Filter</button>
      </form>
      ${
        page.runs.length === 0
          ? html`<p class="empty">No runs match.</p>`
          : html`<table class="runs" id="run-table">
              <thead>
                <tr>
                  <th>Run</th>
                  <th>Entity</th>
                  <th>Status</th>
                  <th>Checkpoint</th>
                  <th title="the run's own model responses (a team's lead, not its members)">
                    Usage
                  </th>
                  <th>Created</th>
                  <th>Updated</th>
                  <th>Input</th>
                </tr>
              </thead>
              <tbody>
                ${page.runs.map(
                  (run) =>
                    html`<tr data-run-id="${run.run_id}">
                      <td>
                        <a href="/ui/runs/${encodeURIComponent(run.run_id)}"
                          ><code>${run.run_id}</code></a
                        >
                      </td>
                      <td>${run.entity.kind} <strong>${run.entity.name}</strong></td>
                      <td>
                        ${statusBadge(run.status)}${run.waiting ? html` · ${waitingNote(run.waiting)}` : ''}
                      </td>
                      <td>${run.checkpoint}</td>
                      <td
                        class="usage"
                        data-tokens="${run.usage.total_tokens}"
                        data-cost-usd="${run.usage.cost_usd}"
                      >
                        ${tokensText(run.usage.total_tokens)} · ${usd(run.usage.cost_usd)}
                      </td>
                      <td>${timeTag(run.created_at)}</td>
                      <td>${timeTag(run.updated_at)}</td>
                      <td class="input">${run.input.slice(0, 120)}</td>
                    </tr>`,
                )}
              </tbody>
            </table>`
      }
      <nav class="pager">
        ${query.page > 1 ? html`<a href="${link(query.page - 1)}" rel="prev">← Newer</a>` : ''}
        <span>page ${query.page}</span>
        ${page.hasMore ? html`<a href="${link(query.page + 1)}" rel="next">Older →</a>` : ''}
      </nav>`,
  );
}

function listSearch(query: RunListQuery): string {
  const search = new URLSearchParams();
  if (query.status) search.set('status', query.status);
  if (query.entity) search.set('entity', query.entity);
  if (query.paused) search.set('paused', '1');
  if (query.page > 1) search.set('page', String(query.page));
  return search.toString();
}
