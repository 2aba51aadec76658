import { html } from 'hono/html';
import { CSRF_FIELD } from '../browser-session.js';
import type { scheduleDetailJson, scheduleJson } from '../routes/schedule-routes.js';
import { RUN_FIELD_NAMES } from '../schedule-schemas.js';
import {
  canAct,
  pageLayout,
  prettyJson,
  statusBadge,
  timeTag,
  type Html,
  type Viewer,
} from './page-layout.js';

type ScheduleJson = ReturnType<typeof scheduleJson>;
type ScheduleDetailJson = ReturnType<typeof scheduleDetailJson>;

/** When a schedule fires, in words: its cron pattern and time zone, or its interval. */
function timingText(schedule: ScheduleJson): string {
  return schedule.cron !== null
    ? `cron ${schedule.cron} (${schedule.timezone ?? 'UTC'})`
    : `every ${formatMs(schedule.every_ms ?? 0)}`;
}

function formatMs(ms: number): string {
  if (ms % 3_600_000 === 0) return `${ms / 3_600_000} h`;
  if (ms % 60_000 === 0) return `${ms / 60_000} min`;
  if (ms % 1000 === 0) return `${ms / 1000} s`;
  return `${ms} ms`;
}

function stateBadge(paused: boolean): Html {
  return paused
    ? html`<span class="badge paused">paused</span>`
    : html`<span class="badge active">active</span>`;
}

const scheduleHref = (id: string) => `/ui/schedules/${encodeURIComponent(id)}`;

/** `/ui/schedules`: the key's schedules, newest first. */
export function scheduleListPage(schedules: readonly ScheduleJson[], viewer: Viewer): Html {
  return pageLayout(
    'Schedules',
    viewer,
    html`<h1>Schedules</h1>
      <p class="muted">
        Runs started on a cron pattern or an interval. Create them with
        <code>POST /v1/schedules</code> or <code>@cairn/client</code>'s
        <code>schedules.create</code>.
      </p>
      ${
        schedules.length === 0
          ? html`<p id="no-schedules">No schedules yet.</p>`
          : html`<table class="runs" id="schedule-table">
              <thead>
                <tr>
                  <th>Schedule</th>
                  <th>Entity</th>
                  <th>When</th>
                  <th>Overlap</th>
                  <th>State</th>
                  <th>Created</th>
                </tr>
              </thead>
              <tbody>
                ${schedules.map(
                  (s) =>
                    html`<tr data-schedule-id="${s.schedule_id}">
                      <td>
                        <a href="${scheduleHref(s.schedule_id)}"><code>${s.schedule_id}</code></a>
                      </td>
                      <td>${s.entity.kind} <code>${s.entity.name}</code></td>
                      <td>${timingText(s)}</td>
                      <td>${s.overlap}</td>
                      <td>${stateBadge(s.paused)}</td>
                      <td>${timeTag(s.created_at)}</td>
                    </tr>`,
                )}
              </tbody>
            </table>`
      }`,
  );
}

/** `/ui/schedules/:id`: a schedule, its next firings, its recent firings and their runs, and a pause or resume button. */
export function schedulePage(schedule: ScheduleDetailJson, viewer: Viewer): Html {
  const { entity, input, recent_firings: firings, next_fire_times: next } = schedule;
  const runFields = Object.fromEntries(
    Object.entries(schedule).filter(([key]) =>
      (RUN_FIELD_NAMES as readonly string[]).includes(key),
    ),
  );
  return pageLayout(
    `Schedule ${schedule.schedule_id}`,
    viewer,
    html`<p><a href="/ui/schedules">← All schedules</a></p>
      <h1>Schedule <code>${schedule.schedule_id}</code> ${stateBadge(schedule.paused)}</h1>
      <dl class="facts">
        <dt>Entity</dt>
        <dd>${entity.kind} <code>${entity.name}</code></dd>
        <dt>When</dt>
        <dd id="schedule-timing">${timingText(schedule)}</dd>
        <dt>Overlap</dt>
        <dd>${schedule.overlap}</dd>
        <dt>Input</dt>
        <dd><pre class="value">${input}</pre></dd>
        ${
          Object.keys(runFields).length > 0
            ? html`<dt>Run fields</dt>
                <dd><pre class="value">${prettyJson(runFields)}</pre></dd>`
            : ''
        }
        <dt>Created</dt>
        <dd>${timeTag(schedule.created_at)}</dd>
      </dl>
      ${canAct(viewer) ? toggleForm(schedule, viewer) : ''}
      <h2>Next firings</h2>
      ${
        next.length === 0
          ? html`<p id="next-firings" class="muted">None: the schedule is paused.</p>`
          : html`<ol id="next-firings">
              ${next.map((iso) => html`<li>${timeTag(iso)}</li>`)}
            </ol>`
      }
      <h2>Recent firings</h2>
      ${
        firings.length === 0
          ? html`<p id="recent-firings" class="muted">It has not fired yet.</p>`
          : html`<table class="runs" id="recent-firings">
              <thead>
                <tr>
                  <th>Fired</th>
                  <th>Outcome</th>
                  <th>Run</th>
                  <th>Status</th>
                  <th>Note</th>
                </tr>
              </thead>
              <tbody>
                ${firings.map(
                  (f) =>
                    html`<tr data-outcome="${f.outcome}">
                      <td>${timeTag(f.fire_time)}</td>
                      <td>${f.outcome}</td>
                      <td>
                        ${
                          f.run_id
                            ? html`<a href="/ui/runs/${encodeURIComponent(f.run_id)}"
                                ><code>${f.run_id}</code></a
                              >`
                            : html`<span class="muted">–</span>`
                        }
                      </td>
                      <td>${f.run_status ? statusBadge(f.run_status) : ''}</td>
                      <td>${f.note ?? ''}</td>
                    </tr>`,
                )}
              </tbody>
            </table>`
      }`,
  );
}

function toggleForm(schedule: ScheduleJson, viewer: Viewer): Html {
  const action = schedule.paused ? 'resume' : 'pause';
  return html`<form
    method="post"
    action="${scheduleHref(schedule.schedule_id)}/${action}"
    class="inline"
  >
    <input type="hidden" name="${CSRF_FIELD}" value="${viewer.csrfToken}" />
    <button type="submit" id="schedule-${action}">${schedule.paused ? 'Resume' : 'Pause'}</button>
  </form>`;
}
