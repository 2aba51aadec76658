import type { AttemptView, StoredEvent } from '@cairn/store';
import { html } from 'hono/html';
import { timeTag, type Html } from './page-layout.js';
import { dueTag } from './run-waiting.js';
import { attemptSpendNote, type AttemptSpend } from './spend-notes.js';

/** A committed checkpoint as the timeline marks it. */
export interface CheckpointMark {
  epoch: number;
  messageIndex: number;
  at: string;
}

/** The checkpoints of `CheckpointCommitted` events (epoch, message index, time). */
export function checkpointMarks(events: readonly StoredEvent[]): CheckpointMark[] {
  return events.map((event) => {
    const data = (event.data ?? {}) as {
      epoch?: unknown;
      lastCheckpointAtMessageIndex?: unknown;
      at?: unknown;
    };
    return {
      epoch: typeof data.epoch === 'number' ? data.epoch : 0,
      messageIndex:
        typeof data.lastCheckpointAtMessageIndex === 'number'
          ? data.lastCheckpointAtMessageIndex
          : 0,
      at: typeof data.at === 'string' ? data.at : event.createdAt.toISOString(),
    };
  });
}

/** A `CapacityWait` as the timeline shows it: the attempt that found no permit for the model, and until when. */
export interface CapacityWaitMark {
  epoch: number;
  model: string;
  until: string;
}

/** The waits of `CapacityWait` events (epoch, model, until): a park, or a wait in place in `run` mode. */
export function capacityWaitMarks(events: readonly StoredEvent[]): CapacityWaitMark[] {
  return events.map((event) => {
    const data = (event.data ?? {}) as { epoch?: unknown; model?: unknown; until?: unknown };
    return {
      epoch: typeof data.epoch === 'number' ? data.epoch : 0,
      model: typeof data.model === 'string' ? data.model : 'unknown',
      until: typeof data.until === 'string' ? data.until : event.createdAt.toISOString(),
    };
  });
}

/** How an attempt ended as its lane says it (`running` while it runs). */
export function attemptOutcome(attempt: Pick<AttemptView, 'ended_at' | 'outcome'>): string {
  return attempt.ended_at ? (attempt.outcome ?? 'ended') : 'running';
}

/** Why an attempt began, in words where the bare reason would puzzle. */
export function reasonLabel(reason: AttemptView['reason']): Html | string {
  if (reason !== 'capacity') return reason;
  return html`<span
      class="reason reason-capacity"
      title="picked up again after parking for model capacity (never counted toward the attempts cap)"
      >capacity</span
    >
    (resumed after waiting for model capacity)`;
}

/** How an attempt ended: a park names the model it found no permit for, and when its job was due. */
function outcomeLabel(how: string, wait: CapacityWaitMark | undefined, now: Date): Html {
  const outcome = html`<span class="outcome outcome-${how}">${how}</span>`;
  if (!wait) return outcome;
  if (how === 'parked')
    return html`${outcome} for model capacity: <code>${wait.model}</code>, due
      ${dueTag(wait.until, now)}`;
  return html`${outcome} · waited in place for model capacity: <code>${wait.model}</code>`;
}

/**
 * One lane per attempt (claim) of the run on a shared time axis, from the
 * run's creation to its last activity (or `now` while an attempt is open),
 * with each checkpoint marked on the lane of the execution that committed it.
 * An attempt that parked for model capacity says for which model; the one
 * that resumed it says why it began. Each attempt says what its model turns
 * used (tokens and cost).
 */
export function attemptTimeline(
  run: { created_at: string; updated_at: string; attempts: readonly AttemptView[] },
  checkpoints: readonly CheckpointMark[],
  now: Date,
  capacityWaits: readonly CapacityWaitMark[] = [],
  spends: ReadonlyMap<number, AttemptSpend> = new Map(),
): Html {
  if (run.attempts.length === 0)
    return html`<p class="empty">No attempt yet: the run waits for a worker.</p>`;
  const start = Date.parse(run.created_at);
  const ends = [
    Date.parse(run.updated_at),
    ...run.attempts.map((a) => (a.ended_at ? Date.parse(a.ended_at) : now.getTime())),
    ...checkpoints.map((c) => Date.parse(c.at)),
  ];
  const end = Math.max(start + 1, ...ends);
  const at = (iso: string) => (((Date.parse(iso) - start) / (end - start)) * 100).toFixed(2);
  return html`<div class="timeline">
    ${run.attempts.map((attempt) => {
      const ended = attempt.ended_at ?? now.toISOString();
      const left = at(attempt.started_at);
      const width = Math.max(0.5, Number(at(ended)) - Number(left)).toFixed(2);
      const how = attemptOutcome(attempt);
      const marks = checkpoints.filter((c) => c.epoch === attempt.epoch);
      const wait = capacityWaits.findLast((w) => w.epoch === attempt.epoch);
      return html`<div
        class="lane"
        data-epoch="${attempt.epoch}"
        data-worker="${attempt.worker_id}"
        data-reason="${attempt.reason}"
        data-outcome="${how}"
      >
        <div class="lane-label">
          <strong>#${attempt.epoch}</strong> <code>${attempt.worker_id}</code> ·
          ${reasonLabel(attempt.reason)} · ${timeTag(attempt.started_at)} →
          ${attempt.ended_at ? timeTag(attempt.ended_at) : html`<em>now</em>`} ·
          ${outcomeLabel(how, wait, now)} · ${marks.length}
          checkpoint${marks.length === 1 ? '' : 's'}${attemptSpendNote(spends.get(attempt.epoch))}
        </div>
        <div class="track">
          <div class="bar outcome-${how}" style="left:${left}%;width:${width}%"></div>
          ${marks.map(
            (mark) =>
              html`<span
                class="checkpoint"
                style="left:${at(mark.at)}%"
                title="checkpoint at message ${mark.messageIndex}, ${mark.at}"
              ></span>`,
          )}
        </div>
      </div>`;
    })}
  </div>`;
}
