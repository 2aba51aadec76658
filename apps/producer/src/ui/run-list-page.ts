import { CANCELLABLE_STATUSES, RUN_STATUSES } from '@cairn/engine';
import type { FleetOverview, RunListPage, RunListSortKey, RunSummaryView } from '@cairn/store';
import { MIN_INPUT_SEARCH_CHARS, SEARCHED_INPUT_CHARS } from '@cairn/store';
import { html } from 'hono/html';
import { OPEN_PRINCIPAL } from '../api-key-auth.js';
import { CSRF_FIELD } from '../browser-session.js';
import { BULK_CANCEL_PATH, MAX_BULK_CANCEL } from './bulk-cancel-page.js';
import { fleetOverviewSection } from './fleet-overview-section.js';
import { canAct, pageLayout, statusBadge, timeTag, type Html, type Viewer } from './page-layout.js';
import {
  dateTimeValue,
  firstDirection,
  runListSearch,
  type RunListQuery,
} from './run-list-query.js';
import { waitingNote } from './run-waiting.js';
import { tokensText, usd } from './spend-notes.js';

const WAITING_LABELS = {
  person: 'paused for a person',
  capacity: 'waiting for capacity',
  either: 'paused or waiting',
} as const;

/**
 * The fleet overview above the run list: a filter form (tenant for an admin,
 * status, entity, held, created and ended ranges, recovered, text search), a table of runs whose
 * column headers sort it, newer/older links that keep the filters and order,
 * and, for a viewer who may act, a checkbox on each run that can be cancelled
 * with a "Cancel selected" form (confirmed before anything is cancelled).
 * Readable without JavaScript.
 */
export function runListPage(
  query: RunListQuery,
  page: RunListPage,
  viewer: Viewer,
  overview: FleetOverview,
): Html {
  const principal = viewer.principal;
  const admin = principal === undefined || principal.tenantId === null;
  const href = (changes: Partial<RunListQuery>) =>
    `/ui?${runListSearch({ ...query, ...changes }, principal ?? OPEN_PRINCIPAL)}`;
  const acting = canAct(viewer);
  const selectable = acting && page.runs.some(cancellable);
  return pageLayout(
    'Runs',
    viewer,
    html`${fleetOverviewSection(overview)}
      <h1>Runs</h1>
      <form class="filters" method="get" action="/ui" id="run-filters">
        ${
          admin
            ? html`<label
                >Tenant <input name="tenant" value="${query.tenant ?? ''}" placeholder="any"
              /></label>`
            : ''
        }
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
          >Held
          <select name="waiting">
            <option value="">any</option>
            ${Object.entries(WAITING_LABELS).map(
              ([value, label]) =>
                html`<option value="${value}" ${query.waiting === value ? 'selected' : ''}>
                  ${label}
                </option>`,
            )}
          </select></label
        >
        <label
          >Created from
          <input
            type="datetime-local"
            name="created_from"
            value="${query.createdFrom ? dateTimeValue(query.createdFrom) : ''}"
        /></label>
        <label
          >to
          <input
            type="datetime-local"
            name="created_to"
            value="${query.createdTo ? dateTimeValue(query.createdTo) : ''}"
          />
          UTC</label
        >
        <label
          >Ended from
          <input
            type="datetime-local"
            name="ended_from"
            value="${query.endedFrom ? dateTimeValue(query.endedFrom) : ''}"
        /></label>
        <label
          >to
          <input
            type="datetime-local"
            name="ended_to"
            value="${query.endedTo ? dateTimeValue(query.endedTo) : ''}"
          />
          UTC</label
        >
        <label title="runs taken over from a dead worker at least once"
          ><input type="checkbox" name="recovered" value="1" ${query.recovered ? 'checked' : ''} />
          recovered after a crash</label
        >
        ${query.recoveredFrom ? html`<input type="hidden" name="recovered_from" value="${dateTimeValue(query.recoveredFrom)}" />` : ''}
        ${query.recoveredTo ? html`<input type="hidden" name="recovered_to" value="${dateTimeValue(query.recoveredTo)}" />` : ''}
        <label
          >Search
          <input
            type="search"
            name="q"
            value="${query.search ?? ''}"
            placeholder="run id or words of the input"
            title="a run id or its beginning; or, from ${MIN_INPUT_SEARCH_CHARS} characters, text in the input's first ${SEARCHED_INPUT_CHARS} characters (any case)"
        /></label>
        ${query.sort.key !== 'created' || query.sort.direction !== 'desc' ? html`<input type="hidden" name="sort" value="${query.sort.key}" /><input type="hidden" name="dir" value="${query.sort.direction}" />` : ''}
        <button type="submit">Filter</button>
        <a href="/ui">clear</a>
      </form>
      ${
        selectable
          ? html`<form
              class="bulk-cancel"
              method="post"
              action="${BULK_CANCEL_PATH}"
              id="bulk-cancel"
              data-max="${MAX_BULK_CANCEL}"
            >
              <input type="hidden" name="${CSRF_FIELD}" value="${viewer.csrfToken}" />
              <input type="hidden" name="back" value="${href({})}" />
              <button type="submit" id="cancel-selected">Cancel selected</button>
              <span class="muted">asks to confirm first</span>
            </form>`
          : ''
      }
      ${
        page.runs.length === 0
          ? html`<p class="empty">No runs match.</p>`
          : html`<table class="runs" id="run-table">
              <thead>
                <tr>
                  <th>Run</th>
                  ${sortHeader('Entity', 'entity', query, href)}
                  ${sortHeader('Status', 'status', query, href)}
                  <th>Checkpoint</th>
                  <th title="the run's own model responses (a team's lead, not its members)">
                    Usage
                  </th>
                  ${sortHeader('Created', 'created', query, href)}
                  ${sortHeader('Updated', 'updated', query, href)}
                  <th>Input</th>
                </tr>
              </thead>
              <tbody>
                ${page.runs.map((run) => runRow(run, selectable))}
              </tbody>
            </table>`
      }
      <nav class="pager">
        ${query.page > 1 ? html`<a href="${href({ page: query.page - 1 })}" rel="prev">← Previous</a>` : ''}
        <span>page ${query.page}</span>
        ${page.hasMore ? html`<a href="${href({ page: query.page + 1 })}" rel="next">Next →</a>` : ''}
      </nav>`,
  );
}

function cancellable(run: RunSummaryView): boolean {
  return CANCELLABLE_STATUSES.includes(run.status);
}

function runRow(run: RunSummaryView, selectable: boolean): Html {
  // The checkbox sits in the run's cell: the columns stay as they are for a viewer who may not act.
  return html`<tr data-run-id="${run.run_id}">
    <td>
      ${
        selectable && cancellable(run)
          ? html`<input
              type="checkbox"
              name="run_id"
              value="${run.run_id}"
              form="bulk-cancel"
              aria-label="select run ${run.run_id}"
            />`
          : ''
      }
      <a href="/ui/runs/${encodeURIComponent(run.run_id)}"><code>${run.run_id}</code></a>
    </td>
    <td>${run.entity.kind} <strong>${run.entity.name}</strong></td>
    <td>${statusBadge(run.status)}${run.waiting ? html` · ${waitingNote(run.waiting)}` : ''}</td>
    <td>${run.checkpoint}</td>
    <td class="usage" data-tokens="${run.usage.total_tokens}" data-cost-usd="${run.usage.cost_usd}">
      ${tokensText(run.usage.total_tokens)} · ${usd(run.usage.cost_usd)}
    </td>
    <td>${timeTag(run.created_at)}</td>
    <td>${timeTag(run.updated_at)}</td>
    <td class="input">${run.input.slice(0, 120)}</td>
  </tr>`;
}

/** A column header that sorts the list by `key`: first in its natural order, then the other way; page 1 again. */
function sortHeader(
  label: string,
  key: RunListSortKey,
  query: RunListQuery,
  href: (changes: Partial<RunListQuery>) => string,
): Html {
  const current = query.sort.key === key ? query.sort.direction : undefined;
  const next = current ? (current === 'asc' ? 'desc' : 'asc') : firstDirection(key);
  const ariaSort = current === 'asc' ? 'ascending' : current === 'desc' ? 'descending' : 'none';
  return html`<th aria-sort="${ariaSort}">
    <a
      href="${href({ sort: { key, direction: next }, page: 1 })}"
      data-sort="${key}"
      data-sort-next="${next}"
      title="sort by ${label.toLowerCase()}, ${next === 'asc' ? 'ascending' : 'descending'}"
      >${label}${current === 'asc' ? ' ▲' : current === 'desc' ? ' ▼' : ''}</a
    >
  </th>`;
}
