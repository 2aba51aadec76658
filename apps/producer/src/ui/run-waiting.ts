import type { RunWaiting } from '@cairn/engine';
import { html } from 'hono/html';
import type { Html } from './page-layout.js';

/**
 * When a parked run's job is due: the time of day (UTC) when it is today,
 * else the date too; the element carries the full timestamp.
 */
export function dueTag(iso: string, now: Date): Html {
  const shown = iso.replace(/\.\d+Z$/, 'Z');
  const sameDay = shown.slice(0, 10) === now.toISOString().slice(0, 10);
  return html`<time datetime="${iso}" title="${shown}"
    >${sameDay ? shown.slice(11) : shown.replace('T', ' ')}</time
  >`;
}

/**
 * What a RUNNING run parked for model capacity waits for, in words:
 * "waiting for capacity: openai-chat:gpt-x until 12:03:04Z" (once that time
 * has passed, its job is due and waits for a worker). Empty when it waits
 * for nothing.
 */
export function waitingNote(waiting: RunWaiting | null, now: Date = new Date()): Html | '' {
  if (!waiting) return '';
  const due = Date.parse(waiting.until) <= now.getTime();
  return html`<span
    class="waiting-note"
    data-waiting-for="${waiting.for}"
    data-waiting-model="${waiting.model}"
    title="parked: no permit for this model within the capacity wait; its job is delayed until then"
    >waiting for ${waiting.for}: <code>${waiting.model}</code> until
    ${dueTag(waiting.until, now)}${due ? ' (due: waiting for a worker)' : ''}</span
  >`;
}
