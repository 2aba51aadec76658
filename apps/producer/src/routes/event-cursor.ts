import type { RunTreeCursor, RunTreeNode } from '@cairn/store';

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

/**
 * Where a stream of a run tree stands: the last seq sent of each run, kept by
 * run id (a member run created earlier but seen later, its creation committed
 * last, takes its place in the order without shifting the others' seqs).
 */
export class TreeStreamPosition {
  private runs: readonly RunTreeNode[] = [];
  private sent: Map<string, number> | undefined;

  /** `start`: the request's cursor, in the order of the tree's first read. */
  constructor(private readonly start: EventCursor) {}

  /** What the next read of the tree starts after. */
  get after(): RunTreeCursor {
    return this.sent ?? this.start;
  }

  /** Takes in the tree as read; its new runs start from their first event. */
  adopt(runs: readonly RunTreeNode[]): void {
    this.runs = runs;
    const start = this.start;
    this.sent ??= new Map(runs.map((run, i) => [run.runId, start[i] ?? 0]));
  }

  /** The run of the tree `runId` names, and whether it is the tree's root. */
  runOf(runId: string): { run: RunTreeNode; root: boolean } {
    const run = this.runs.find((r) => r.runId === runId)!;
    return { run, root: run === this.runs[0] };
  }

  /** Records `seq` of `runId` as sent; returns the stream's cursor after it, as an SSE id. */
  advance(runId: string, seq: number): string {
    this.sent!.set(runId, seq);
    return formatEventCursor(this.runs.map((r) => this.sent!.get(r.runId) ?? 0));
  }
}
