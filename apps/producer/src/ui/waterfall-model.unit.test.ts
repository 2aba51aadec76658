import { usageView } from '@cairn/engine';
import type { AttemptView, RunView, StoredEvent, ToolCallView } from '@cairn/store';
import { describe, expect, it } from 'vitest';
import { buildWaterfall, type WaterfallTool } from './waterfall-model.js';

const T0 = Date.parse('2026-01-01T00:00:00.000Z');
const iso = (ms: number) => new Date(T0 + ms).toISOString();
const EMPTY_USAGE = usageView({ inputTokens: 0, outputTokens: 0, totalTokens: 0 });

function attempt(epoch: number, from: number, to: number | null, outcome: string | null) {
  const reason = epoch === 1 ? 'run' : 'continue';
  return {
    epoch,
    worker_id: 'w',
    reason,
    started_at: iso(from),
    ended_at: to === null ? null : iso(to),
    outcome,
  } satisfies AttemptView;
}

function tool(id: string, from: number, to: number | null, child: string | null = null) {
  return {
    tool_call_id: id,
    name: child ? 'delegate_task_to_member' : 'lookup',
    args: {},
    result: to === null ? null : 'ok',
    status: to === null ? 'running' : 'completed',
    batch: 1,
    idempotency_key: id,
    child_run_id: child,
    started_at: iso(from),
    ended_at: to === null ? null : iso(to),
  } satisfies ToolCallView;
}

/** A run view as the store returns it, with only what the waterfall reads set. */
function view(runId: string, parts: Partial<RunView>): RunView {
  return {
    run_id: runId,
    session_id: 's',
    user_id: null,
    parent_run_id: null,
    parent_tool_call_id: null,
    entity: { kind: 'agent', name: 'a' },
    status: 'COMPLETED',
    input: '',
    content: null,
    checkpoint: 'tool-batch',
    last_checkpoint_at_message_index: 0,
    epoch: 1,
    messages: [],
    tools: [],
    member_runs: [],
    attempts: [],
    pending_actions: [],
    error: null,
    usage: EMPTY_USAGE,
    usage_total: EMPTY_USAGE,
    budget: null,
    metadata: {},
    cancel_requested_at: null,
    definition_hash: null,
    priority: 5,
    waiting: null,
    deadline_at: null,
    checkpoints: [],
    forked_from: null,
    forks: [],
    created_at: iso(0),
    updated_at: iso(0),
    ...parts,
  };
}

function event(
  runId: string,
  seq: number,
  type: string,
  data: Record<string, unknown>,
): StoredEvent {
  return { runId, seq, type, data, createdAt: new Date(T0) };
}

describe('buildWaterfall', () => {
  it("pairs each turn with the completion that answered it (retries counted), and ends an unanswered one at its attempt's end", () => {
    const run = view('r', {
      status: 'PAUSED',
      attempts: [attempt(1, 10, 500, 'paused')],
      updated_at: iso(500),
    });
    const events = [
      event('r', 1, 'ModelRequestStarted', { model: 'm', messages: 1, epoch: 1, at: iso(20) }),
      event('r', 2, 'ModelRequestCompleted', { retrying: true, epoch: 1, at: iso(40) }),
      event('r', 3, 'ModelRequestCompleted', {
        model: 'm',
        toolCalls: 1,
        usage: { totalTokens: 7 },
        capacityWaitMs: 5,
        epoch: 1,
        at: iso(60),
      }),
      event('r', 4, 'ModelRequestStarted', { model: 'm', messages: 3, epoch: 1, at: iso(300) }),
      event('r', 5, 'RunPaused', { actions: [{ kind: 'budget' }], epoch: 1, at: iso(500) }),
    ];
    const waterfall = buildWaterfall(run, events, new Date(T0 + 1000), true);
    const [lane] = waterfall.root.lanes;
    expect(
      lane!.bars.map((b) => b.kind === 'turn' && [b.start, b.end, b.status, b.retries]),
    ).toEqual([
      [20, 60, 'completed', 1],
      [300, 500, 'interrupted', 0],
    ]);
    // The second turn's request begins after the first's response (message 1).
    expect(lane!.bars.map((b) => b.kind === 'turn' && b.requestFrom)).toEqual([0, 2]);
    expect(lane!.waits.map((w) => [w.kind, w.start, w.end])).toEqual([['capacity', 15, 20]]);
    // Paused at its budget and still waiting: an open gap, and the axis reaches now.
    expect(lane!.after).toMatchObject({ kind: 'budget', start: 500, end: null });
    expect(lane!.after!.label).toBe('paused at its budget: 1 action to decide');
    expect(waterfall.span).toBe(1000);
    expect(waterfall.root.queued).toMatchObject({ kind: 'queued', start: 0, end: 10 });
  });

  it('nests a member under its delegation, and past the cap keeps the latest bars (a member whose delegation is left out stays, unplaced)', () => {
    const member = view('m', {
      parent_run_id: 'r',
      attempts: [attempt(1, 110, 190, 'completed')],
      tools: [tool('m1', 120, 180)],
    });
    const run = view('r', {
      attempts: [attempt(1, 10, 400, 'completed')],
      tools: [tool('t1', 100, 200, 'm'), tool('t2', 250, 300), tool('t3', 310, 350)],
      member_runs: [member],
      updated_at: iso(400),
    });
    const all = buildWaterfall(run, [], new Date(T0 + 1000), false);
    expect(all.total).toBe(4);
    const delegation = all.root.lanes[0]!.bars[0] as WaterfallTool;
    expect(delegation.member?.view.run_id).toBe('m');
    expect(delegation.member?.lanes[0]!.bars.map((b) => b.start)).toEqual([120]);
    expect(all.span).toBe(400);

    const capped = buildWaterfall(run, [], new Date(T0 + 1000), false, 2);
    expect([capped.total, capped.drawn]).toEqual([4, 2]);
    expect(capped.root.lanes[0]!.bars.map((b) => (b as WaterfallTool).call.tool_call_id)).toEqual([
      't2',
      't3',
    ]);
    expect(capped.root.unplaced.map((m) => [m.view.run_id, m.lanes[0]!.bars.length])).toEqual([
      ['m', 0],
    ]);
  });

  it("starts a lost worker's wait at its last sign, a member's on the same worker included", () => {
    const member = view('m', {
      parent_run_id: 'r',
      attempts: [attempt(1, 110, 600, 'superseded')],
      tools: [tool('m1', 120, 380)],
    });
    const run = view('r', {
      attempts: [
        attempt(1, 10, 600, 'superseded'),
        { ...attempt(2, 650, null, null), reason: 'recovered' },
      ],
      tools: [tool('t1', 100, null, 'm')],
      member_runs: [member],
      status: 'RUNNING',
      checkpoints: [{ seq: 1, message_index: 2, at: iso(100), epoch: 1 }],
      updated_at: iso(650),
    });
    const waterfall = buildWaterfall(run, [], new Date(T0 + 700), true);
    expect(waterfall.root.lanes[0]!.after).toMatchObject({
      kind: 'recovery',
      start: 380,
      end: 650,
    });
    expect(waterfall.root.lanes[0]!.checkpoints).toEqual([100]);
  });
});
