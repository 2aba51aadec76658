import { html } from 'hono/html';
import { attemptOutcome, reasonLabel } from './attempt-timeline.js';
import { foldedText, prettyJson, statusBadge, timeTag, type Html } from './page-layout.js';
import {
  seconds,
  type Waterfall,
  type WaterfallLane,
  type WaterfallRun,
  type WaterfallSpan,
  type WaterfallTool,
  type WaterfallTurn,
  type WaterfallWait,
} from './waterfall-model.js';

/** How many ticks the time axis is cut into. */
const AXIS_TICKS = 4;

/** Renders one waterfall: positions as percentages of its span, the details of each bar beside it. */
class WaterfallHtml {
  private readonly tools: { id: string; bar: WaterfallTool; runId: string }[] = [];

  constructor(private readonly waterfall: Waterfall) {}

  render(): Html {
    const { waterfall } = this;
    const body = this.run(waterfall.root);
    return html`<div
        class="wf"
        data-t0="${waterfall.t0}"
        data-span="${waterfall.span}"
        data-now="${waterfall.now}"
        data-live="${waterfall.live ? '1' : '0'}"
      >
        ${
          waterfall.drawn < waterfall.total
            ? html`<p
                class="wf-capped"
                data-drawn="${waterfall.drawn}"
                data-total="${waterfall.total}"
              >
                This run has ${waterfall.total} model turns and tool calls: the latest
                ${waterfall.drawn} are drawn. Every tool call is in Tool batches, every message in
                Messages.
              </p>`
            : ''
        }
        ${this.axis()} ${body}
      </div>
      <div class="wf-details">${this.tools.map((tool) => this.toolDetail(tool))}</div>`;
  }

  private axis(): Html {
    const { span } = this.waterfall;
    const ticks = Array.from({ length: AXIS_TICKS + 1 }, (_, i) => (span * i) / AXIS_TICKS);
    return html`<div class="wf-row wf-axis">
      <span class="wf-name muted">since created</span>
      <div class="wf-track">
        ${ticks.map(
          (ms, i) =>
            html`<span class="wf-tick" data-tick="${i / AXIS_TICKS}" style="left:${this.pct(ms)}%"
              >${seconds(ms)}</span
            >`,
        )}
      </div>
    </div>`;
  }

  private run(run: WaterfallRun): Html {
    return html`<div class="wf-run" data-wf-run="${run.view.run_id}">
      ${run.queued ? this.waitRow(run.queued) : ''}
      ${
        run.lanes.length === 0
          ? html`<p class="empty">No attempt yet: the run waits for a worker.</p>`
          : ''
      }
      ${run.lanes.map((lane) => html`${this.lane(run, lane)}${lane.after ? this.waitRow(lane.after) : ''}`)}
      ${run.unplaced.map((member) => this.member(member, null))}
    </div>`;
  }

  private lane(run: WaterfallRun, lane: WaterfallLane): Html {
    const { attempt } = lane;
    const outcome = attemptOutcome(attempt);
    return html`<div
      class="wf-lane"
      data-epoch="${attempt.epoch}"
      data-worker="${attempt.worker_id}"
      data-reason="${attempt.reason}"
      data-outcome="${outcome}"
    >
      <div class="wf-row wf-lane-head">
        <span class="wf-name"
          ><strong>#${attempt.epoch}</strong> <code>${attempt.worker_id}</code> ·
          ${reasonLabel(attempt.reason)} →
          <span class="outcome outcome-${outcome}">${outcome}</span> · ${this.duration(lane)}</span
        >
        <div class="wf-track">
          <span class="wf-attempt outcome-${outcome}" ${this.place(lane)}></span>
          ${lane.waits.map(
            (wait) =>
              html`<span
                class="wf-wait wait-${wait.kind}"
                data-wait="${wait.kind}"
                title="${wait.label}"
                ${this.place(wait)}
              ></span>`,
          )}
          ${lane.checkpoints.map(
            (at) =>
              html`<span
                class="wf-checkpoint"
                title="checkpoint, ${seconds(at)} after the run was created"
                style="left:${this.pct(at)}%"
              ></span>`,
          )}
        </div>
      </div>
      ${lane.bars.map((bar) => (bar.kind === 'turn' ? this.turn(run, bar) : this.tool(run, bar)))}
    </div>`;
  }

  private turn(run: WaterfallRun, turn: WaterfallTurn): Html {
    const href = `/ui/runs/${encodeURIComponent(run.view.run_id)}/turns/${turn.messageIndex}?from=${turn.requestFrom}`;
    const what =
      turn.status !== 'completed'
        ? turn.status
        : turn.toolCalls > 0
          ? `${turn.toolCalls} tool call${turn.toolCalls === 1 ? '' : 's'}`
          : 'its answer';
    return html`<div class="wf-row" data-bar="turn">
      <span class="wf-name"
        >model <code>${turn.model}</code> · ${this.duration(turn)} →
        ${what}${turn.tokens > 0 ? html` · ${turn.tokens} tokens` : ''}${turn.retries > 0 ? html` · ${turn.retries} retr${turn.retries === 1 ? 'y' : 'ies'}` : ''}</span
      >
      <div class="wf-track">
        <a
          class="wf-bar bar-turn status-${turn.status}"
          href="${href}"
          data-turn="${turn.epoch}:${turn.messageIndex}"
          data-detail-url="${href}"
          title="model turn: its request and response"
          ${this.place(turn)}
          ><span class="wf-bar-text"></span
        ></a>
      </div>
    </div>`;
  }

  private tool(run: WaterfallRun, bar: WaterfallTool): Html {
    const id = `wf-d-${this.tools.length + 1}`;
    this.tools.push({ id, bar, runId: run.view.run_id });
    const { call } = bar;
    const row = html`<div class="wf-row" data-bar="tool" data-tool-call-id="${call.tool_call_id}">
      <span class="wf-name"
        ><strong>${call.name}</strong> ·
        <span class="tool-status tool-${call.status}">${call.status}</span> · ${this.duration(bar)}
        <span class="muted">batch ${call.batch}</span></span
      >
      <div class="wf-track">
        <a
          class="wf-bar bar-tool status-${call.status}"
          href="#${id}"
          data-detail="${id}"
          title="${call.name}: its args and result"
          ${this.place(bar)}
        ></a>
      </div>
    </div>`;
    return bar.member ? html`${row}${this.member(bar.member, call.name)}` : row;
  }

  private member(member: WaterfallRun, delegation: string | null): Html {
    const { view } = member;
    return html`<details
      class="wf-member"
      data-member-run-id="${view.run_id}"
      id="wf-m-${view.run_id}"
    >
      <summary>
        <span class="wf-name"
          >${delegation ? '↳ ' : ''}${view.entity.kind}
          <strong>${view.entity.name}</strong> ${statusBadge(view.status)} · ${view.attempts.length}
          attempt${view.attempts.length === 1 ? '' : 's'}</span
        >
        <a href="/ui/runs/${encodeURIComponent(view.run_id)}">its page</a>
      </summary>
      ${this.run(member)}
    </details>`;
  }

  private waitRow(wait: WaterfallWait): Html {
    return html`<div class="wf-row wf-gap" data-wait="${wait.kind}">
      <span class="wf-name muted">${wait.label} · ${this.duration(wait)}</span>
      <div class="wf-track">
        <span class="wf-wait wait-${wait.kind}" title="${wait.label}" ${this.place(wait)}></span>
      </div>
    </div>`;
  }

  private toolDetail({ id, bar, runId }: { id: string; bar: WaterfallTool; runId: string }): Html {
    const { call } = bar;
    return html`<section class="wf-detail" id="${id}" data-tool-call-id="${call.tool_call_id}">
      <h3>${call.name} <span class="tool-status tool-${call.status}">${call.status}</span></h3>
      <p class="muted">
        <code>${call.tool_call_id}</code> · batch ${call.batch} · ${timeTag(call.started_at)} →
        ${call.ended_at ? timeTag(call.ended_at) : html`<em>running</em>`} · ${this.duration(bar)}
        ${
          runId === this.waterfall.root.view.run_id
            ? ''
            : html` · of member run
                <a href="/ui/runs/${encodeURIComponent(runId)}"><code>${runId}</code></a>`
        }
      </p>
      <h4>Args</h4>
      <pre class="value wf-args">${prettyJson(call.args)}</pre>
      <h4>Result</h4>
      ${
        call.result === null
          ? html`<p class="muted wf-result">no result yet</p>`
          : html`<div class="wf-result">${foldedText(call.result, 2000)}</div>`
      }
    </section>`;
  }

  /** The span's position: `data-s`/`data-e` (ms; no `data-e` while open) for the page's script, and its style. */
  private place(span: WaterfallSpan): Html {
    const end = span.end ?? this.waterfall.span;
    const width = Math.max(0, end - span.start);
    return html`data-s="${span.start}" ${span.end === null ? '' : html`data-e="${span.end}"`}
    style="left:${this.pct(span.start)}%;width:${this.pct(width)}%"`;
  }

  private duration(span: WaterfallSpan): Html | string {
    if (span.end === null)
      return html`<span class="wf-running" data-s="${span.start}">running</span>`;
    return seconds(span.end - span.start);
  }

  private pct(ms: number): string {
    return ((ms / this.waterfall.span) * 100).toFixed(3);
  }
}

/**
 * The run tree on one time axis (readable without script): a lane per
 * attempt with its worker, reason and outcome, each model turn and tool call
 * a bar (a turn's bar links to its request and response, a tool's to its
 * args and result, shown below), checkpoints as ticks, member runs nested
 * under their delegations (`<details>`, with their own lanes), and waits as
 * marked gaps. Open spans carry no `data-e`: the page's script grows them.
 */
export function waterfallSection(waterfall: Waterfall): Html {
  return new WaterfallHtml(waterfall).render();
}
