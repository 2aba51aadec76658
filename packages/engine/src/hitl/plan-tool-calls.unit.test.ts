import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { tool } from '../tool.js';
import { executableFromTool } from '../executable-tool.js';
import { digestArgs, type PendingActionRecord } from './pending-action.js';
import { planToolCalls } from './plan-tool-calls.js';
import { TestClock } from '../testing/test-clock.js';

const restart = tool({
  name: 'restart',
  description: '',
  parameters: z.object({ service: z.string() }),
  needsApproval: ({ service }) => {
    if (service === 'boom') throw new Error('policy service down');
    return service !== 'cache';
  },
  approval: { timeoutMs: 60_000 },
  execute: () => 'ok',
});
const ask = tool({
  name: 'ask',
  description: '',
  parameters: z.object({ q: z.string() }),
  external: true,
});
const tools = new Map([restart, ask].map((t) => [t.name, executableFromTool(t)]));
const call = (id: string, name: string, args: unknown) => ({
  id,
  name,
  arguments: typeof args === 'string' ? args : JSON.stringify(args),
});
const clock = new TestClock();
const context = (actions: PendingActionRecord[] = []) => ({
  runId: 'run-1',
  batch: 2,
  signal: new AbortController().signal,
  tools,
  actions: new Map(actions.map((a) => [a.toolCallId, a])),
  memberPath: () => Promise.resolve(['ops-team', 'ops-agent']),
  clock,
});

describe('planToolCalls', () => {
  it('gates calls whose needsApproval holds, executes the rest, and never gates invalid arguments', async () => {
    const plan = await planToolCalls(
      [
        call('c1', 'restart', { service: 'api' }),
        call('c2', 'restart', { service: 'cache' }),
        call('c3', 'restart', { service: 7 }),
        call('c4', 'ask', { q: 'which?' }),
        call('c5', 'restart', '{oops'),
      ],
      context(),
    );
    expect(plan.execute.map((c) => c.id)).toEqual(['c2', 'c3', 'c5']);
    expect(
      plan.gated.map((g) => [g.call.id, g.action.kind, g.action.memberPath, g.action.batch]),
    ).toEqual([
      ['c1', 'approval', ['ops-team', 'ops-agent'], 2],
      ['c4', 'external', ['ops-team', 'ops-agent'], 2],
    ]);
    const [first] = plan.gated;
    expect(first!.action.argsDigest).toBe(digestArgs({ service: 'api' }));
    // `approval.timeoutMs` from the engine's clock.
    expect(first!.action.expiresAt).toEqual(clock.in(60_000));
    expect(first!.action.argsSchema).toEqual(restart.spec.parameters);
    expect(plan.gated[1]!.action.expiresAt).toBeNull();
  });

  it('a throwing needsApproval does not run the call: the model gets an error saying why', async () => {
    const plan = await planToolCalls([call('c1', 'restart', { service: 'boom' })], context());
    expect(plan.execute).toEqual([]);
    expect(plan.gated).toEqual([]);
    expect(plan.settled.map((o) => o.message)).toEqual([
      {
        role: 'tool',
        toolCallId: 'c1',
        name: 'restart',
        content: 'Tool "restart" was not run: its approval check failed: policy service down',
        isError: true,
      },
    ]);
  });

  it('follows recorded decisions: approved and edited calls run in the order decided, the rest become tool messages', async () => {
    const at = (s: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, s));
    const action = (
      toolCallId: string,
      over: Partial<PendingActionRecord>,
    ): PendingActionRecord => ({
      actionId: `act-${toolCallId}`,
      kind: 'approval',
      runId: 'run-1',
      rootRunId: 'run-1',
      memberPath: ['ops-agent'],
      toolCallId,
      tool: 'restart',
      args: { service: toolCallId },
      argsDigest: digestArgs({ service: toolCallId }),
      argsSchema: null,
      batch: 1,
      status: 'decided',
      decision: { type: 'approve' },
      onTimeout: 'reject',
      expiresAt: null,
      decidedAt: at(1),
      consumedAt: null,
      consumedEpoch: null,
      createdAt: at(0),
      ...over,
    });
    const plan = await planToolCalls(
      ['a', 'b', 'c', 'd', 'e', 'f'].map((id) => call(id, 'restart', { service: id })),
      context([
        action('a', { decidedAt: at(9) }),
        action('b', { decision: { type: 'edit', args: { service: 'b2' } }, decidedAt: at(3) }),
        action('c', { decision: { type: 'reject', message: 'no' } }),
        action('d', {
          status: 'expired',
          decision: { type: 'reject', message: 'approval timed out' },
        }),
        action('e', { status: 'cancelled', decision: null }),
        action('f', { status: 'pending', decision: null, decidedAt: null }),
      ]),
    );
    expect(plan.decided.map((d) => [d.call.id, d.args, d.edited])).toEqual([
      ['b', { service: 'b2' }, true],
      ['a', { service: 'a' }, false],
    ]);
    expect(plan.settled.map((o) => [o.message.toolCallId, o.message.content])).toEqual([
      ['c', 'A person rejected this call of tool "restart"; it was not run. Their message: no'],
      [
        'd',
        'A person rejected this call of tool "restart"; it was not run. Their message: approval timed out',
      ],
      ['e', 'Tool "restart" was not run: it was cancelled before anyone decided it.'],
    ]);
    expect(plan.waiting.map((a) => a.actionId)).toEqual(['act-f']);
    expect(plan.execute).toEqual([]);
  });
});
