import { assertNever } from '@cairn/engine/lifecycle';
import type { PendingActionView } from '@cairn/store';
import { html } from 'hono/html';
import { prettyJson, timeTag, type Html } from './page-layout.js';
import { tokensText, usd } from './spend-notes.js';

/**
 * Each action with its tool and args; an undecided one gets approve / edit /
 * reject (an approval), a result form (an external call) or a raised budget
 * and reject (a budget), Resume (a suspension), posted as a decision by the page's script; buttons
 * are disabled for a viewer who may not act.
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
          data-action-kind="${action.kind}"
          data-action-status="${action.status}"
        >
          <div>
            <strong>${action.tool}</strong> · ${action.kind} · ${action.member_path.join(' › ')} ·
            <span class="action-status">${action.status}</span>
            ${action.expires_at ? html` · expires ${timeTag(action.expires_at)}` : ''}
          </div>
          ${
            action.status === 'pending'
              ? undecidedAction(action, disabled)
              : html`<pre class="value">${prettyJson(action.args)}</pre>`
          }
        </li>`,
    )}
  </ul>`;
}

function undecidedAction(action: PendingActionView, disabled: string): Html {
  switch (action.kind) {
    case 'approval':
      return html`<textarea class="action-args" rows="4" ${disabled}>
${prettyJson(action.args)}</textarea>
        <div class="buttons">
          <button data-command="approve" ${disabled}>Approve</button>
          <button data-command="edit" ${disabled}>Approve with edited args</button>
          <input class="action-message" placeholder="why (for reject)" ${disabled} />
          <button data-command="reject" ${disabled}>Reject</button>
        </div>`;
    case 'external':
      return html`<pre class="value">${prettyJson(action.args)}</pre>
        <textarea class="action-output" rows="3" placeholder="the result" ${disabled}></textarea>
        <div class="buttons">
          <button data-command="result" ${disabled}>Send result</button>
        </div>`;
    case 'budget':
      return budgetAction(action.args, disabled);
    case 'suspended':
      // Approving a suspension resumes the run (as `POST /v1/runs/:run_id/resume` does).
      return html`<pre class="value">${prettyJson(action.args)}</pre>
        <div class="buttons">
          <button data-command="approve" ${disabled}>Resume</button>
        </div>`;
    default:
      return assertNever(action.kind);
  }
}

/** A budget action's args: its run tree's budget, or (`scope: 'tenant'`) its tenant's spent day. */
interface BudgetArgs {
  scope?: 'run' | 'tenant';
  tenant?: string;
  day?: string;
  spent?: { tokens?: number; cost_usd?: number };
  budget?: { max_tokens?: number | null; max_cost_usd?: number | null };
}

/**
 * What the run spent and the budget it hit, then a form that raises the
 * budget (a new max cost and/or max tokens, each above what was spent) and a
 * reject, which ends the run in ERROR. A tenant's spent day is approved as
 * it is (the run goes on for the rest of that day).
 */
function budgetAction(raw: unknown, disabled: string): Html {
  const args = (raw ?? {}) as BudgetArgs;
  const spentCost = args.spent?.cost_usd ?? 0;
  const maxCost = args.budget?.max_cost_usd ?? null;
  const reject = html`<input class="action-message" placeholder="why (for reject)" ${disabled} />
    <button data-command="reject" ${disabled}>Reject (ends the run in ERROR)</button>`;
  if (args.scope === 'tenant') {
    return html`<p class="budget-spent" data-spent-cost-usd="${spentCost}">
        Tenant <strong>${args.tenant ?? ''}</strong> spent <strong>${usd(spentCost)}</strong> of its
        ${maxCost === null ? 'daily budget' : html`<strong>${usd(maxCost)}</strong> daily budget`}
        on ${args.day ?? 'this day'} (UTC).
      </p>
      <div class="buttons">
        <button data-command="approve" ${disabled}>Approve for the rest of the day</button>
        ${reject}
      </div>`;
  }
  const spentTokens = args.spent?.tokens ?? 0;
  const maxTokens = args.budget?.max_tokens ?? null;
  const limits = [
    maxTokens === null ? null : tokensText(maxTokens),
    maxCost === null ? null : usd(maxCost),
  ].filter((limit) => limit !== null);
  return html`<p
      class="budget-spent"
      data-spent-tokens="${spentTokens}"
      data-spent-cost-usd="${spentCost}"
    >
      Spent <strong>${tokensText(spentTokens)}</strong> and <strong>${usd(spentCost)}</strong>;
      budget <strong>${limits.join(' and ')}</strong>. The next model request would pass it.
    </p>
    <div class="buttons budget-raise">
      <label
        >Max cost (USD)
        <input
          class="budget-max-cost"
          type="number"
          min="0"
          step="any"
          placeholder="${maxCost ?? 'no limit'}"
          ${disabled}
      /></label>
      <label
        >Max tokens
        <input
          class="budget-max-tokens"
          type="number"
          min="1"
          step="1"
          placeholder="${maxTokens ?? 'no limit'}"
          ${disabled}
      /></label>
      <button data-command="raise-budget" ${disabled}>Approve with this budget</button>
      ${reject}
    </div>`;
}
