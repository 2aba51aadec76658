import { SUSPEND_MOVE_BY_STATUS } from '@cairn/engine/lifecycle';
import type { RunView } from '@cairn/store';
import { html } from 'hono/html';
import type { Html } from './page-layout.js';

/**
 * The run page's Suspend (in every status the lifecycle suspends, unless the run is suspended already;
 * at the next checkpoint boundary for a running run), Suspend now (the
 * calls in flight aborted) and Resume (a suspended run: its tree has a
 * `suspended` action waiting), posted by the page's script with its CSRF token.
 */
export function suspendButtons(
  run: Pick<RunView, 'status' | 'pending_actions'>,
  disabledUnless: (allowed: boolean) => string,
): Html {
  // What a suspend does in this status is the lifecycle's; a run already suspended is offered Resume instead.
  const move = SUSPEND_MOVE_BY_STATUS[run.status];
  const suspended = run.pending_actions.some(
    (a) => a.kind === 'suspended' && a.status === 'pending',
  );
  const suspendable = move !== 'refused' && !suspended;
  return html`<button data-command="suspend" ${disabledUnless(suspendable)}>Suspend</button>
    <button data-command="suspend-now" ${disabledUnless(move === 'at-boundary')}>
      Suspend now
    </button>
    ${
      suspended ? html`<button data-command="resume" ${disabledUnless(true)}>Resume</button>` : ''
    }`;
}
