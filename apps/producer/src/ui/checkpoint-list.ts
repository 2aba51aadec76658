import { forkRefusalOf } from '@cairn/engine/lifecycle';
import type { RunView } from '@cairn/store';
import { html } from 'hono/html';
import { timeTag, type Html } from './page-layout.js';

/** Links to runs by id: a fork's source, a run's forks. */
function runLink(runId: string): Html {
  return html`<a href="/ui/runs/${encodeURIComponent(runId)}"><code>${runId}</code></a>`;
}

/**
 * Where a fork came from, and the runs forked from this one (docs/forks-and-replay.md "Forks:
 * time travel at a checkpoint"); empty for a run that is neither.
 */
export function forkLinks(run: Pick<RunView, 'forked_from' | 'forks'>): Html | '' {
  if (!run.forked_from && run.forks.length === 0) return '';
  return html`<dl class="forks">
    ${
      run.forked_from
        ? html`<dt>Forked from</dt>
            <dd data-forked-from="${run.forked_from.run_id}">
              ${runLink(run.forked_from.run_id)} at checkpoint ${run.forked_from.checkpoint}
              (message ${run.forked_from.message_index})
            </dd>`
        : ''
    }
    ${
      run.forks.length > 0
        ? html`<dt>Forks</dt>
            <dd>
              <ul class="fork-list">
                ${run.forks.map((id) => html`<li data-fork-run-id="${id}">${runLink(id)}</li>`)}
              </ul>
            </dd>`
        : ''
    }
  </dl>`;
}

/**
 * The run's committed checkpoints, each with "Fork from here" (the input
 * box above is the fork's optional input). A fork's first checkpoints are
 * its source's, marked so. A member run is forked through its team.
 */
export function checkpointList(
  run: Pick<RunView, 'checkpoints' | 'forked_from' | 'parent_run_id' | 'status'>,
  acting: boolean,
): Html {
  if (run.checkpoints.length === 0)
    return html`<p class="empty">No checkpoint yet: nothing is committed.</p>`;
  // Which runs may be forked is the fork move's rule.
  const forkable = acting && forkRefusalOf(run.status, run.parent_run_id) === null;
  const inherited = run.forked_from?.message_index ?? 0;
  return html`<ol class="checkpoints">
    ${run.checkpoints.map(
      (c) =>
        html`<li data-checkpoint="${c.seq}" data-message-index="${c.message_index}">
          <strong>#${c.seq}</strong> · message ${c.message_index} · epoch ${c.epoch} ·
          ${timeTag(c.at)}${
            c.message_index <= inherited ? html` · <span class="muted">from the source</span>` : ''
          }
          <button data-command="fork-at" data-checkpoint="${c.seq}" ${forkable ? '' : 'disabled'}>
            Fork from here
          </button>
        </li>`,
    )}
  </ol>`;
}
