import {
  CANCELLABLE_STATUSES,
  DefinitionChangedError,
  FINAL_EVENT_TYPES,
  FINAL_STATUSES,
  LIVE_EVENT_TYPES,
  RUN_EVENT_TYPES,
} from '@cairn/engine';
import type { RunMessagesPage, RunView } from '@cairn/store';
import { html } from 'hono/html';
import { attemptTimeline, type CapacityWaitMark, type CheckpointMark } from './attempt-timeline.js';
import { memberRuns } from './member-runs.js';
import { messagePager } from './message-pager.js';
import {
  canAct,
  pageLayout,
  prettyJson,
  statusBadge,
  timeTag,
  type Html,
  type Viewer,
} from './page-layout.js';
import { pendingActions } from './pending-actions.js';
import { suspendButtons } from './suspend-buttons.js';
import { waitingNote } from './run-waiting.js';
import { deadlineNote } from './deadline-note.js';
import { checkpointList, forkLinks } from './checkpoint-list.js';
import { budgetNote, usageNote, usagesDiffer, type AttemptSpend } from './spend-notes.js';
import { toolBatches } from './tool-batches.js';
import { waterfallSection } from './waterfall.js';
import type { Waterfall } from './waterfall-model.js';

/** What a run page shows besides the run view itself. */
export interface RunPageData {
  run: RunView;
  checkpoints: readonly CheckpointMark[];
  /** The run's `CapacityWait`s: each attempt that parked (or waited in place) for model capacity. */
  capacityWaits: readonly CapacityWaitMark[];
  /** What each attempt's model turns used, by epoch (from its `ModelRequestCompleted` events). */
  attemptSpends: ReadonlyMap<number, AttemptSpend>;
  messages: RunMessagesPage;
  messagePage: number;
  now: Date;
  /** The run tree on one time axis. */
  waterfall: Waterfall;
  /** The MCP server of each call of an `mcpTools` tool, by tool call id (from its `ToolCallStarted`). */
  mcpServers: ReadonlyMap<string, string>;
  /** True when the live tail may ask for the model's text as it streams (`?include=deltas`). */
  liveText: boolean;
  /** The schedule and firing time that started the run, when a schedule did. */
  firing?: { scheduleId: string; fireTime: Date };
}

/**
 * A run's page. Each `data-refresh` section is re-rendered by the page's
 * script while the run is live (`data-live="1"`), from this same page.
 */
export function runPage(data: RunPageData, viewer: Viewer): Html {
  const { run } = data;
  // A paused run is followed too: its stream stays open and a decision resumes it.
  const live = !FINAL_STATUSES.includes(run.status);
  const acting = canAct(viewer);
  const disabledUnless = (allowed: boolean) => (allowed && acting ? '' : 'disabled');
  return pageLayout(
    `Run ${run.run_id}`,
    viewer,
    html`<article
      id="run"
      data-run-id="${run.run_id}"
      data-live="${live ? '1' : '0'}"
      data-status="${run.status}"
      data-event-types="${[...RUN_EVENT_TYPES, ...(data.liveText ? LIVE_EVENT_TYPES : [])].join(',')}"
      data-live-text="${data.liveText ? '1' : '0'}"
      data-final-types="${FINAL_EVENT_TYPES.join(',')}"
    >
      <section data-refresh="header" class="run-header">
        <h1><code>${run.run_id}</code> ${statusBadge(run.status)}</h1>
        ${run.waiting ? html`<p class="run-waiting">${waitingNote(run.waiting, data.now)}</p>` : ''}
        <dl>
          <dt>Entity</dt>
          <dd>${run.entity.kind} <strong>${run.entity.name}</strong></dd>
          <dt>Checkpoint mode</dt>
          <dd>${run.checkpoint}</dd>
          <dt>Priority</dt>
          <dd data-priority="${run.priority}">
            ${run.priority}
            <span class="muted"
              >(1 first … 10 last among its tenant's runs waiting for a model)</span
            >
          </dd>
          ${
            run.definition_hash === null
              ? ''
              : html`<dt>Definition</dt>
                  <dd><code>${run.definition_hash}</code></dd>`
          }
          <dt>Session</dt>
          <dd><code>${run.session_id}</code></dd>
          ${
            data.firing
              ? html`<dt>Schedule</dt>
                  <dd id="run-schedule">
                    <a href="/ui/schedules/${encodeURIComponent(data.firing.scheduleId)}"
                      ><code>${data.firing.scheduleId}</code></a
                    >
                    · firing of ${timeTag(data.firing.fireTime.toISOString())}
                  </dd>`
              : ''
          }
          ${
            run.parent_run_id
              ? html`<dt>Team run</dt>
                  <dd>
                    <a href="/ui/runs/${encodeURIComponent(run.parent_run_id)}"
                      ><code>${run.parent_run_id}</code></a
                    >
                  </dd>`
              : ''
          }
          <dt>Created</dt>
          <dd>${timeTag(run.created_at)}</dd>
          <dt>Updated</dt>
          <dd>${timeTag(run.updated_at)}</dd>
          ${
            run.deadline_at
              ? html`<dt>Deadline</dt>
                  <dd>${deadlineNote(run.deadline_at, live, data.now)}</dd>`
              : ''
          }
          <dt>Last checkpoint</dt>
          <dd>message ${run.last_checkpoint_at_message_index} · epoch ${run.epoch}</dd>
          <dt>Usage</dt>
          <dd data-usage="run">${usageNote(run.usage)}</dd>
          ${
            usagesDiffer(run.usage, run.usage_total)
              ? html`<dt>Usage with members</dt>
                  <dd data-usage="tree">${usageNote(run.usage_total)}</dd>`
              : ''
          }
          ${
            run.budget
              ? html`<dt>Budget</dt>
                  <dd data-budget>
                    ${budgetNote(
                      { tokens: run.usage_total.total_tokens, cost_usd: run.usage_total.cost_usd },
                      run.budget,
                    )}
                    <span class="muted">(spent / budget, members included)</span>
                  </dd>`
              : ''
          }
          ${
            run.cancel_requested_at
              ? html`<dt>Cancel requested</dt>
                  <dd>${timeTag(run.cancel_requested_at)}</dd>`
              : ''
          }
        </dl>
        ${forkLinks(run)}
        ${run.error ? html`<div class="error-box"><strong>${run.error.name}</strong>: ${run.error.message}</div>` : ''}
      </section>

      <section class="controls">
        <div data-refresh="controls" class="buttons">
          <button
            data-command="cancel"
            ${disabledUnless(CANCELLABLE_STATUSES.includes(run.status))}
          >
            Cancel
          </button>
          ${suspendButtons(run, disabledUnless)}
          <button data-command="continue" ${disabledUnless(true)}>Continue</button>
          <button data-command="fork" ${disabledUnless(true)}>Fork</button>
          ${
            run.error?.name === DefinitionChangedError.name
              ? html`<button data-command="upgrade" ${disabledUnless(true)}>
                  Continue on the new definition
                </button>`
              : ''
          }
          ${acting ? '' : html`<span class="muted">This key may only read.</span>`}
        </div>
        <textarea
          id="continue-input"
          rows="2"
          placeholder="optional input for continue / fork"
          ${disabledUnless(true)}
        ></textarea>
        <p id="flash" role="status" aria-live="polite"></p>
      </section>

      <section>
        <h2>Pending actions</h2>
        <div data-refresh="actions">${pendingActions(run.pending_actions, acting)}</div>
      </section>

      <section>
        <h2>Attempts</h2>
        <div data-refresh="timeline">
          ${attemptTimeline(run, data.checkpoints, data.now, data.capacityWaits, data.attemptSpends)}
        </div>
      </section>

      <section id="waterfall">
        <h2>Waterfall</h2>
        <p class="muted">
          Each attempt a lane; its model turns and tool calls as bars (click one for its request and
          response, or args and result); checkpoints as ticks; member runs under their delegations;
          waits as hatched gaps.
        </p>
        <div data-refresh="waterfall">${waterfallSection(data.waterfall)}</div>
        <aside id="wf-panel" class="wf-panel" hidden aria-live="polite">
          <button type="button" class="wf-panel-close" data-wf-close>Close</button>
          <div class="wf-panel-body"></div>
        </aside>
      </section>

      <section>
        <h2>Checkpoints</h2>
        <div data-refresh="checkpoints">${checkpointList(run, acting)}</div>
      </section>

      <section>
        <h2>Member runs</h2>
        <div data-refresh="members">${memberRuns(run.member_runs)}</div>
      </section>

      <section>
        <h2>Tool batches</h2>
        <div data-refresh="tools">${toolBatches(run.tools, data.mcpServers)}</div>
      </section>

      <section>
        <h2>Answer</h2>
        <div data-refresh="content">
          ${run.content === null ? html`<p class="empty">No answer yet.</p>` : html`<pre class="value answer">${run.content}</pre>`}
        </div>
      </section>

      <section>
        <h2>Live tail</h2>
        <p class="muted" id="tail-state">
          ${live ? 'following the run…' : 'the run is not running'}
        </p>
        <label class="muted"><input type="checkbox" id="tail-raw" /> show the raw events</label>
        ${data.liveText ? html`<pre id="live-text" class="value live-text" aria-live="polite" hidden></pre>` : ''}
        <ol id="tail" class="tail"></ol>
      </section>

      <section id="messages">
        <h2>Messages</h2>
        <div data-refresh="messages">
          ${messagePager(run.run_id, data.messages, data.messagePage)}
        </div>
      </section>

      <details>
        <summary>Input and metadata</summary>
        <pre class="value">${run.input}</pre>
        <pre class="value">${prettyJson(run.metadata)}</pre>
      </details>
    </article>`,
  );
}
