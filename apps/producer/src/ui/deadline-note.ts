import { html } from 'hono/html';
import type { Html } from './page-layout.js';
import { dueTag } from './run-waiting.js';

/** A span of ms in words a person reads at a glance: "45 s", "3 min 20 s", "2 h 5 min", "3 d 4 h". */
export function spanInWords(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s} s`;
  const min = Math.floor(s / 60);
  if (min < 60) return s % 60 === 0 ? `${min} min` : `${min} min ${s % 60} s`;
  const h = Math.floor(min / 60);
  if (h < 24) return min % 60 === 0 ? `${h} h` : `${h} h ${min % 60} min`;
  const d = Math.floor(h / 24);
  return h % 24 === 0 ? `${d} d` : `${d} d ${h % 24} h`;
}

/**
 * A run's deadline (docs/deadlines.md): when it must have ended, and how
 * long is left ("12:03:04Z (in 3 min 20 s)") or, for a run still live past
 * it, that it has passed; a finished run shows only the time.
 */
export function deadlineNote(deadlineAt: string, live: boolean, now: Date): Html {
  const leftMs = Date.parse(deadlineAt) - now.getTime();
  const left = !live ? '' : leftMs > 0 ? `(in ${spanInWords(leftMs)})` : '(passed)';
  return html`<span data-deadline-at="${deadlineAt}">${dueTag(deadlineAt, now)} ${left}</span>`;
}
