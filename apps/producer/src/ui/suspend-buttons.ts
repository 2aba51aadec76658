import type { RunView } from '@cairn/store';
import { html } from 'hono/html';
import type { Html } from './page-layout.js';

/** Statuses a page offers Suspend in: a queued or running run (a paused one is suspended through the API). */
const SUSPENDABLE_ON_PAGE: readonly string[] = ['PENDING', 'RUNNING'];

/**
 * The run page's Suspend (at the next checkpoint boundary), Suspend now (the
 * calls in flight aborted) and Resume (a suspended run: its tree has a
 * `suspended` action waiting), posted by the page's script with its CSRF token.
 */
export function suspendButtons(
  run: Pick<RunView, 'status' | 'pending_actions'>,
  disabledUnless: (allowed: boolean) => string,
): Html {
  const suspendable = SUSPENDABLE_ON_PAGE.includes(run.status);
  const suspended = run.pending_actions.some(
    (a) => a.kind === 'suspended' && a.status === 'pending',
  );
  return html`<button data-command="suspend" ${disabledUnless(suspendable)}>Suspend</button>
    <button data-command="suspend-now" ${disabledUnless(run.status === 'RUNNING')}>
      Suspend now
    </button>
    ${
      suspended ? html`<button data-command="resume" ${disabledUnless(true)}>Resume</button>` : ''
    }`;
}
