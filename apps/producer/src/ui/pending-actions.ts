import type { PendingActionView } from '@cairn/store';
import { html } from 'hono/html';
import { prettyJson, timeTag, type Html } from './page-layout.js';

/**
 * Each action with its tool and args; an undecided one gets approve / edit /
 * reject (an approval) or a result form (an external call), posted as a
 * decision by the page's script; buttons are disabled for a viewer who may
 * not act.
 */
export function pendingActions(actions: readonly PendingActionView[], canAct: boolean): Html {
  if (actions.length === 0) return html`<p class="empty">No pending action.</p>`;
  const disabled = canAct ? '' : 'disabled';
  return html`<ul class="actions">
    ${actions.map(
      (action) =>
        html`<li
          class="action"
          data-action-id="${action.action_id}"
          data-args-digest="${action.args_digest}"
          data-action-status="${action.status}"
        >
          <div>
            <strong>${action.tool}</strong> · ${action.kind} · ${action.member_path.join(' › ')} ·
            <span class="action-status">${action.status}</span>
            ${action.expires_at ? html` · expires ${timeTag(action.expires_at)}` : ''}
          </div>
          ${
            action.status !== 'pending'
              ? html`<pre class="value">${prettyJson(action.args)}</pre>`
              : action.kind === 'approval'
                ? html`<textarea class="action-args" rows="4" ${disabled}>
${prettyJson(action.args)}</textarea>
                    <div class="buttons">
                      <button data-command="approve" ${disabled}>Approve</button>
                      <button data-command="edit" ${disabled}>Approve with edited args</button>
                      <input class="action-message" placeholder="why (for reject)" ${disabled} />
                      <button data-command="reject" ${disabled}>Reject</button>
                    </div>`
                : html`<pre class="value">${prettyJson(action.args)}</pre>
                    <textarea
                      class="action-output"
                      rows="3"
                      placeholder="the result"
                      ${disabled}
                    ></textarea>
                    <div class="buttons">
                      <button data-command="result" ${disabled}>Send result</button>
                    </div>`
          }
        </li>`,
    )}
  </ul>`;
}
