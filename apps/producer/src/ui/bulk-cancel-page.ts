import type { RunStatus } from '@cairn/engine';
import type { RunSummaryView } from '@cairn/store';
import { html } from 'hono/html';
import { CSRF_FIELD } from '../browser-session.js';
import { pageLayout, statusBadge, type Html, type Viewer } from './page-layout.js';

/** The bulk cancel's route under the pages' mount (`/ui`). */
export const BULK_CANCEL_ROUTE = '/cancel-runs';

/** Where the run list's "Cancel selected" form posts. */
export const BULK_CANCEL_PATH = `/ui${BULK_CANCEL_ROUTE}`;

/** The most runs one bulk cancel may name. */
export const MAX_BULK_CANCEL = 100;

/** What a bulk cancel did to one run. */
export type BulkCancelOutcome =
  | { runId: string; outcome: 'cancelled' }
  /** It had ended before the cancel reached it (`status`: how). */
  | { runId: string; outcome: 'already-ended'; status: RunStatus }
  /** No such run, or another tenant's: the same answer, so nothing is learnt of it. */
  | { runId: string; outcome: 'not-found' };

/** The selection a bulk cancel confirms: the runs the viewer may see, and the ids it may not. */
export interface BulkCancelSelection {
  runs: readonly RunSummaryView[];
  missing: readonly string[];
}

/**
 * The confirmation step without JavaScript: the selected runs, and a form
 * that posts them again with `confirm=1` (and the session's CSRF token).
 */
export function bulkCancelConfirmPage(
  selection: BulkCancelSelection,
  back: string,
  viewer: Viewer,
): Html {
  const ids = [...selection.runs.map((run) => run.run_id), ...selection.missing];
  return pageLayout(
    'Cancel runs?',
    viewer,
    html`<h1>Cancel ${ids.length} run${ids.length === 1 ? '' : 's'}?</h1>
      <p>
        Each run below is cancelled as its Cancel button would: a queued or paused run at once, a
        running one by its worker.
      </p>
      <table class="runs" id="bulk-cancel-selection">
        <thead>
          <tr>
            <th>Run</th>
            <th>Entity</th>
            <th>Status now</th>
          </tr>
        </thead>
        <tbody>
          ${selection.runs.map(
            (run) =>
              html`<tr data-run-id="${run.run_id}">
                <td><code>${run.run_id}</code></td>
                <td>${run.entity.kind} <strong>${run.entity.name}</strong></td>
                <td>${statusBadge(run.status)}</td>
              </tr>`,
          )}
          ${selection.missing.map(
            (runId) =>
              html`<tr data-run-id="${runId}">
                <td><code>${runId}</code></td>
                <td colspan="2" class="muted">no such run</td>
              </tr>`,
          )}
        </tbody>
      </table>
      <form method="post" action="${BULK_CANCEL_PATH}" id="bulk-cancel-confirm">
        <input type="hidden" name="${CSRF_FIELD}" value="${viewer.csrfToken}" />
        <input type="hidden" name="confirm" value="1" />
        <input type="hidden" name="back" value="${back}" />
        ${ids.map((runId) => html`<input type="hidden" name="run_id" value="${runId}" />`)}
        <button type="submit" id="confirm-cancel">
          Cancel ${ids.length} run${ids.length === 1 ? '' : 's'}
        </button>
        <a href="${back}">Back to the list, cancelling nothing</a>
      </form>`,
  );
}

const OUTCOME_WORDS: Record<BulkCancelOutcome['outcome'], string> = {
  cancelled: 'cancelled',
  'already-ended': 'already ended',
  'not-found': 'not found (no such run, or not yours)',
};

/** What a bulk cancel did, run by run. */
export function bulkCancelResultPage(
  outcomes: readonly BulkCancelOutcome[],
  back: string,
  viewer: Viewer,
): Html {
  const cancelled = outcomes.filter((o) => o.outcome === 'cancelled').length;
  return pageLayout(
    'Runs cancelled',
    viewer,
    html`<h1>
        Cancelled ${cancelled} of ${outcomes.length} run${outcomes.length === 1 ? '' : 's'}
      </h1>
      <table class="runs" id="bulk-cancel-result">
        <thead>
          <tr>
            <th>Run</th>
            <th>Outcome</th>
          </tr>
        </thead>
        <tbody>
          ${outcomes.map(
            (o) =>
              html`<tr data-run-id="${o.runId}" data-outcome="${o.outcome}">
                <td>
                  ${
                    o.outcome === 'not-found'
                      ? html`<code>${o.runId}</code>`
                      : html`<a href="/ui/runs/${encodeURIComponent(o.runId)}"
                          ><code>${o.runId}</code></a
                        >`
                  }
                </td>
                <td>
                  ${OUTCOME_WORDS[o.outcome]}${o.outcome === 'already-ended' ? html` (${statusBadge(o.status)})` : ''}
                </td>
              </tr>`,
          )}
        </tbody>
      </table>
      <p><a href="${back}" id="back-to-list">Back to the list</a></p>`,
  );
}
