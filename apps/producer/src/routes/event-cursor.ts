/**
 * The position in a run's event stream, sent as each event's SSE `id` and
 * taken back as `Last-Event-ID` or `?after=`: the last seq sent of each run
 * of the run's tree, the run itself first, then its member runs in the
 * tree's stable order. A run without member runs has the plain integer seq
 * (`7`); a tree's cursor joins the seqs with dots (`7.4.0`). A bare integer
 * for a tree is the run's own seq with its members from their start.
 */
export type EventCursor = number[];

const CURSOR = /^\d+(\.\d+)*$/;

/** The cursor in `raw`; undefined when it is malformed. An empty value is the stream's start. */
export function parseEventCursor(raw: string): EventCursor | undefined {
  const text = raw.trim();
  if (text === '') return [];
  if (!CURSOR.test(text)) return undefined;
  const seqs = text.split('.').map(Number);
  return seqs.every(Number.isSafeInteger) ? seqs : undefined;
}

/** The SSE `id` of `cursor` (a seq per run of the tree): the integer seq while the run has no member runs. */
export function formatEventCursor(cursor: EventCursor): string {
  return cursor.length <= 1 ? String(cursor[0] ?? 0) : cursor.join('.');
}
