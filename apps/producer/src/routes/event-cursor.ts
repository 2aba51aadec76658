import type { RunTreeCursor, RunTreeNode } from '@cairn/store';
import { parseInteger, STORED_INDEX } from '../integer-parameter.js';

/** Hex digits of a member run's id that name it in a cursor. */
const MEMBER_KEY_LENGTH = 12;

/**
 * The position in a run's event stream, sent as each event's SSE `id` and
 * taken back as `Last-Event-ID` or `?after=`: the last seq sent of the run
 * itself, and of each member run below it that has sent any, named by the
 * first 12 hex digits of its run id. A run without member events has the
 * plain integer seq (`7`); a tree's cursor adds `.<key>-<seq>` per member
 * (`7.3f2a9c1eab12-4`). Keyed by run, not by place, so a member whose
 * creation commits after a later one's never shifts another's seq. A bare
 * integer for a tree is the run's own seq with its members from their start.
 */
export interface EventCursor {
  root: number;
  /** Last seq sent by member key ({@link memberCursorKey}). */
  members: ReadonlyMap<string, number>;
}

const CURSOR = new RegExp(`^(\\d+)((?:\\.[0-9a-f]{${MEMBER_KEY_LENGTH}}-\\d+)*)$`);

/** A member run's key in a cursor: the first 12 hex digits of its run id. */
export function memberCursorKey(runId: string): string {
  return runId.replace(/-/g, '').slice(0, MEMBER_KEY_LENGTH).toLowerCase();
}

/** The cursor in `raw`; undefined when it is malformed or a seq is past what a stored seq can be ({@link STORED_INDEX}). An empty value is the stream's start. */
export function parseEventCursor(raw: string): EventCursor | undefined {
  const text = raw.trim();
  if (text === '') return { root: 0, members: new Map() };
  const match = CURSOR.exec(text);
  if (!match) return undefined;
  const root = parseInteger(match[1]!, STORED_INDEX);
  const members = new Map<string, number>();
  for (const part of match[2]!.split('.').slice(1)) {
    const [key, raw] = part.split('-') as [string, string];
    const seq = parseInteger(raw, STORED_INDEX);
    if (seq === undefined) return undefined;
    members.set(key, seq);
  }
  return root === undefined ? undefined : { root, members };
}

/**
 * Where a stream of a run tree stands: the last seq sent of each run, by run
 * id; a run not sent from yet starts where the request's cursor says.
 */
export class TreeStreamPosition {
  private runs: readonly RunTreeNode[] = [];
  private readonly sent = new Map<string, number>();

  /** `start`: the request's cursor. */
  constructor(
    private readonly rootRunId: string,
    private readonly start: EventCursor,
  ) {}

  /** What the next read of the tree starts after, for each of its runs. */
  get after(): RunTreeCursor {
    return (runId) => this.sent.get(runId) ?? this.startOf(runId);
  }

  /** Takes in the tree as read. */
  adopt(runs: readonly RunTreeNode[]): void {
    this.runs = runs;
  }

  /** The run of the tree `runId` names, and whether it is the tree's root. */
  runOf(runId: string): { run: RunTreeNode; root: boolean } {
    const run = this.runs.find((r) => r.runId === runId)!;
    return { run, root: run.runId === this.rootRunId };
  }

  /** Records `seq` of `runId` as sent; returns the stream's cursor after it, as an SSE id. */
  advance(runId: string, seq: number): string {
    this.sent.set(runId, seq);
    const members = this.runs
      .filter((r) => r.runId !== this.rootRunId)
      .map(
        (r) => [memberCursorKey(r.runId), this.sent.get(r.runId) ?? this.startOf(r.runId)] as const,
      )
      .filter(([, memberSeq]) => memberSeq > 0)
      .map(([key, memberSeq]) => `.${key}-${memberSeq}`);
    return `${this.sent.get(this.rootRunId) ?? this.start.root}${members.join('')}`;
  }

  private startOf(runId: string): number {
    return runId === this.rootRunId
      ? this.start.root
      : (this.start.members.get(memberCursorKey(runId)) ?? 0);
  }
}
