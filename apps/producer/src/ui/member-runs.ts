import type { RunView } from '@cairn/store';
import { html } from 'hono/html';
import { statusBadge, type Html } from './page-layout.js';

/** The run's member runs as a nested list, each linked to its own page. */
export function memberRuns(members: readonly RunView[]): Html {
  if (members.length === 0) return html`<p class="empty">No member runs.</p>`;
  return html`<ul class="members">
    ${members.map(
      (member) =>
        html`<li data-member-run-id="${member.run_id}">
          <a href="/ui/runs/${encodeURIComponent(member.run_id)}"
            >${member.entity.kind} <strong>${member.entity.name}</strong></a
          >
          ${statusBadge(member.status)} <code class="muted">${member.run_id}</code> ·
          ${member.attempts.length} attempt${member.attempts.length === 1 ? '' : 's'} ·
          ${member.tools.length} tool call${member.tools.length === 1 ? '' : 's'}
          ${member.member_runs.length > 0 ? memberRuns(member.member_runs) : ''}
        </li>`,
    )}
  </ul>`;
}
