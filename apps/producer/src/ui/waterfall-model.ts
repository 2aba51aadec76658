import type { AttemptView, RunView, StoredEvent, ToolCallView } from '@cairn/store';

/** Most bars (model turns and tool calls, members' included) one waterfall draws: past it, the latest are drawn. */
export const WATERFALL_MAX_BARS = 300;

/** The stored events a waterfall reads (model turns, checkpoints, waits): a run page reads these of each run of its tree. */
export const WATERFALL_EVENT_TYPES: readonly string[] = [
  'ModelRequestStarted',
  'ModelRequestCompleted',
  'CheckpointCommitted',
  'CapacityWait',
  'RunPaused',
];

/** The ids of a run's member runs, recursively (not its own). */
export function memberRunIds(run: RunView): string[] {
  return run.member_runs.flatMap((member) => [member.run_id, ...memberRunIds(member)]);
}

/** A stretch of the waterfall's time axis, in ms since its start; `end` null: still open (it grows while the run runs). */
export interface WaterfallSpan {
  start: number;
  end: number | null;
}

/** A model turn of an attempt, from its `ModelRequestStarted` and `ModelRequestCompleted` events. */
export interface WaterfallTurn extends WaterfallSpan {
  kind: 'turn';
  epoch: number;
  model: string;
  /** The index of the turn's response in the run's history (the history's length when it asked). */
  messageIndex: number;
  /** The index after the previous turn's response: the request's new messages begin here. */
  requestFrom: number;
  status: 'completed' | 'running' | 'interrupted';
  toolCalls: number;
  tokens: number;
  retries: number;
  /** How long it waited in place for a model permit before asking (ms). */
  capacityWaitMs: number;
}

/** A tool call of an attempt; a delegation carries the member run it started. */
export interface WaterfallTool extends WaterfallSpan {
  kind: 'tool';
  call: ToolCallView;
  member: WaterfallRun | null;
}

/** A bar of a lane. */
export type WaterfallBar = WaterfallTurn | WaterfallTool;

/** Why a run held no worker for a while, or waited in place. */
export type WaitKind = 'queued' | 'capacity' | 'person' | 'budget' | 'recovery' | 'idle';

/** A wait: a gap between attempts (or before the first, or after the last while it lasts), or a wait inside one. */
export interface WaterfallWait extends WaterfallSpan {
  kind: WaitKind;
  /** What it waited for, in words. */
  label: string;
}

/** One attempt (claim) of a run: its span, checkpoints, bars, and the wait that followed it. */
export interface WaterfallLane extends WaterfallSpan {
  attempt: AttemptView;
  checkpoints: number[];
  bars: WaterfallBar[];
  /** Waits in place inside the attempt (for a model permit). */
  waits: WaterfallWait[];
  /** The gap after this attempt, before the next one (or still open). */
  after: WaterfallWait | null;
}

/** A run of the tree with its lanes; its member runs hang under their delegations' bars. */
export interface WaterfallRun {
  view: RunView;
  /** The gap between its creation and its first attempt. */
  queued: WaterfallWait | null;
  lanes: WaterfallLane[];
  /** Member runs no drawn delegation started (their delegation's bar is past the cap, or unknown). */
  unplaced: WaterfallRun[];
}

/** A run tree on one time axis. */
export interface Waterfall {
  /** The axis' start: the run's creation (epoch ms). */
  t0: number;
  /** The axis' length in ms: to the last activity, or to `now` while the run is live. */
  span: number;
  /** The server's clock when it was built (epoch ms). */
  now: number;
  live: boolean;
  root: WaterfallRun;
  /** Bars in the tree, and how many are drawn (at most {@link WATERFALL_MAX_BARS}). */
  total: number;
  drawn: number;
}

interface Clock {
  t0: number;
  now: number;
  at(iso: string | null | undefined): number | null;
}

/**
 * A run tree's waterfall: one lane per attempt of each run, its model turns
 * (from the tree's stored events) and tool calls (from the run view) as bars,
 * checkpoints as ticks, and its waits. `events` are the tree's events of
 * {@link WATERFALL_EVENT_TYPES} (any order across runs, each run's in seq
 * order); a member run is placed under
 * its delegation's bar. Bounded by the run's size: past `maxBars` bars only
 * the latest are kept.
 */
export function buildWaterfall(
  run: RunView,
  events: readonly StoredEvent[],
  now: Date,
  live: boolean,
  maxBars = WATERFALL_MAX_BARS,
): Waterfall {
  const t0 = Date.parse(run.created_at);
  const clock: Clock = {
    t0,
    now: now.getTime(),
    at: (iso) => (iso ? Date.parse(iso) - t0 : null),
  };
  const eventsOf = new Map<string, StoredEvent[]>();
  for (const event of events) {
    const own = eventsOf.get(event.runId);
    if (own) own.push(event);
    else eventsOf.set(event.runId, [event]);
  }
  const bars: WaterfallBar[] = [];
  const root = runOf(run, eventsOf, clock, bars);
  const drawn = new Set(
    [...bars].sort((a, b) => a.start - b.start).slice(Math.max(0, bars.length - maxBars)),
  );
  if (drawn.size < bars.length) dropUndrawn(root, drawn);
  const ends = collectEnds(root);
  const last = Math.max(1, ...ends, clock.at(run.updated_at) ?? 0);
  return {
    t0,
    span: live ? Math.max(last, clock.now - t0) : last,
    now: clock.now,
    live,
    root,
    total: bars.length,
    drawn: drawn.size,
  };
}

function runOf(
  view: RunView,
  eventsOf: ReadonlyMap<string, StoredEvent[]>,
  clock: Clock,
  bars: WaterfallBar[],
): WaterfallRun {
  const events = eventsOf.get(view.run_id) ?? [];
  const members = new Map(view.member_runs.map((m) => [m.run_id, m]));
  const lanes: WaterfallLane[] = view.attempts.map((attempt, i) => ({
    attempt,
    start: clock.at(attempt.started_at)!,
    end: clock.at(attempt.ended_at),
    checkpoints: view.checkpoints
      .filter((c) => c.epoch === attempt.epoch)
      .map((c) => clock.at(c.at)!),
    bars: [],
    waits: [],
    after: gapAfter(view, i, events, clock),
  }));
  const laneAt = (t: number) => lanes.findLast((lane) => lane.start <= t) ?? lanes[0];
  for (const turn of turnsOf(events, clock)) {
    const lane = lanes.find((l) => l.attempt.epoch === turn.epoch) ?? laneAt(turn.start);
    if (!lane) continue;
    if (turn.end === null && lane.end !== null) {
      turn.end = lane.end;
      turn.status = 'interrupted';
    }
    lane.bars.push(turn);
    bars.push(turn);
    if (turn.capacityWaitMs > 0)
      lane.waits.push({
        kind: 'capacity',
        start: turn.start - turn.capacityWaitMs,
        end: turn.start,
        label: `waited ${seconds(turn.capacityWaitMs)} for a permit for ${turn.model}`,
      });
  }
  const placed = new Set<string>();
  for (const call of view.tools) {
    const start = clock.at(call.started_at)!;
    const lane = laneAt(start);
    if (!lane) continue;
    const memberView = call.child_run_id ? members.get(call.child_run_id) : undefined;
    if (memberView) placed.add(memberView.run_id);
    const bar: WaterfallTool = {
      kind: 'tool',
      call,
      start,
      end: clock.at(call.ended_at),
      member: memberView ? runOf(memberView, eventsOf, clock, bars) : null,
    };
    lane.bars.push(bar);
    bars.push(bar);
  }
  for (const lane of lanes) {
    lane.bars.sort((a, b) => a.start - b.start);
    // A lost worker's attempt ends when another takes the run over: its wait begins at its last sign.
    if (lane.after?.kind === 'recovery') lane.after.start = lastSign(lane);
  }
  const first = lanes[0];
  const created = clock.at(view.created_at)!;
  const queuedUntil = first ? first.start : view.status === 'PENDING' ? null : created;
  return {
    view,
    queued:
      queuedUntil === created
        ? null
        : { kind: 'queued', start: created, end: queuedUntil, label: 'queued for a worker' },
    lanes,
    unplaced: view.member_runs
      .filter((m) => !placed.has(m.run_id))
      .map((m) => runOf(m, eventsOf, clock, bars)),
  };
}

/** The model turns of a run's events: each `ModelRequestStarted` with the completion that answered it. */
function turnsOf(events: readonly StoredEvent[], clock: Clock): WaterfallTurn[] {
  const turns: WaterfallTurn[] = [];
  const open = new Map<number, WaterfallTurn>();
  let requestFrom = 0;
  for (const event of events) {
    const data = (event.data ?? {}) as Record<string, unknown>;
    const epoch = typeof data.epoch === 'number' ? data.epoch : 0;
    const at = clock.at(typeof data.at === 'string' ? data.at : event.createdAt.toISOString())!;
    if (event.type === 'ModelRequestStarted') {
      const messageIndex = typeof data.messages === 'number' ? data.messages : 0;
      const turn: WaterfallTurn = {
        kind: 'turn',
        epoch,
        model: typeof data.model === 'string' ? data.model : 'model',
        messageIndex,
        requestFrom: Math.min(requestFrom, messageIndex),
        start: at,
        end: null,
        status: 'running',
        toolCalls: 0,
        tokens: 0,
        retries: 0,
        capacityWaitMs: 0,
      };
      open.set(epoch, turn);
      turns.push(turn);
      requestFrom = messageIndex + 1;
    } else if (event.type === 'ModelRequestCompleted') {
      const turn = open.get(epoch);
      if (!turn) continue;
      if (data.retrying === true) {
        turn.retries += 1;
        continue;
      }
      open.delete(epoch);
      turn.end = at;
      turn.status = 'completed';
      turn.toolCalls = typeof data.toolCalls === 'number' ? data.toolCalls : 0;
      const usage = (data.usage ?? {}) as { totalTokens?: unknown };
      turn.tokens = typeof usage.totalTokens === 'number' ? usage.totalTokens : 0;
      turn.capacityWaitMs = typeof data.capacityWaitMs === 'number' ? data.capacityWaitMs : 0;
    }
  }
  return turns;
}

/** The gap after attempt `i`: until the next attempt began, or still open when the run waits now. */
function gapAfter(
  view: RunView,
  i: number,
  events: readonly StoredEvent[],
  clock: Clock,
): WaterfallWait | null {
  const attempt = view.attempts[i]!;
  const start = clock.at(attempt.ended_at);
  if (start === null) return null;
  const next = view.attempts[i + 1];
  const end = next ? clock.at(next.started_at)! : null;
  const ofEpoch = (type: string) =>
    events.findLast(
      (e) => e.type === type && (e.data as { epoch?: unknown } | null)?.epoch === attempt.epoch,
    )?.data as Record<string, unknown> | undefined;
  switch (attempt.outcome) {
    case 'parked': {
      const model = ofEpoch('CapacityWait')?.model;
      const label = `parked for model capacity${typeof model === 'string' ? `: ${model}` : ''}`;
      return next || view.status === 'RUNNING' ? { kind: 'capacity', start, end, label } : null;
    }
    case 'paused': {
      const actions = (ofEpoch('RunPaused')?.actions ?? []) as { kind?: unknown }[];
      const budget = actions.some((a) => a.kind === 'budget');
      return next || view.status === 'PAUSED'
        ? {
            kind: budget ? 'budget' : 'person',
            start,
            end,
            label: `${budget ? 'paused at its budget' : 'paused for a person'}: ${actions.length} action${actions.length === 1 ? '' : 's'} to decide`,
          }
        : null;
    }
    case 'superseded':
      return next || view.status === 'RUNNING'
        ? {
            kind: 'recovery',
            start,
            end,
            label: 'its worker was lost: no sign of it until another worker took the run over',
          }
        : null;
    default:
      return next ? { kind: 'idle', start, end, label: 'ended; continued later' } : null;
  }
}

/**
 * The last time a lane showed its worker alive: its latest checkpoint, bar
 * start or bar end within it, or that of a member run's lane on the same
 * worker (a team's worker runs its members).
 */
function lastSign(lane: WaterfallLane, end = lane.end ?? Infinity): number {
  const times = [
    lane.start,
    ...lane.checkpoints,
    ...lane.bars.flatMap((bar) => [bar.start, ...(bar.end === null ? [] : [bar.end])]),
    ...lane.bars.flatMap((bar) =>
      bar.kind === 'tool' && bar.member
        ? bar.member.lanes
            .filter((l) => l.attempt.worker_id === lane.attempt.worker_id && l.start <= end)
            .map((l) => lastSign(l, end))
        : [],
    ),
  ];
  return Math.max(...times.filter((t) => t <= end));
}

/** Keeps only the drawn bars; a member under an undrawn delegation moves to its run's unplaced members. */
function dropUndrawn(run: WaterfallRun, drawn: ReadonlySet<WaterfallBar>): void {
  for (const member of run.unplaced) dropUndrawn(member, drawn);
  for (const lane of run.lanes) {
    for (const bar of lane.bars) {
      if (bar.kind === 'tool' && bar.member) {
        dropUndrawn(bar.member, drawn);
        if (!drawn.has(bar)) run.unplaced.push(bar.member);
      }
    }
    lane.bars = lane.bars.filter((bar) => drawn.has(bar));
  }
}

/** Every known end and start of the tree (ms), for the axis' length. */
function collectEnds(run: WaterfallRun): number[] {
  const ends: number[] = [];
  const add = (span: WaterfallSpan) =>
    ends.push(span.start, ...(span.end === null ? [] : [span.end]));
  if (run.queued) add(run.queued);
  for (const lane of run.lanes) {
    add(lane);
    ends.push(...lane.checkpoints);
    if (lane.after) add(lane.after);
    for (const bar of lane.bars) {
      add(bar);
      if (bar.kind === 'tool' && bar.member) ends.push(...collectEnds(bar.member));
    }
  }
  for (const member of run.unplaced) ends.push(...collectEnds(member));
  return ends;
}

/** A duration in words: `412 ms`, `1.02 s`. */
export function seconds(ms: number): string {
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(2)} s`;
}
