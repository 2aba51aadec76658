import { describe, expect, it } from 'vitest';
import { newRun, useStoreTestContext } from './test-support/store-test-context.js';

const ctx = useStoreTestContext();

describe('run events', () => {
  it('numbers events per run from 1 and lists them after a sequence number', async () => {
    const a = await ctx.store.createRun(newRun());
    const b = await ctx.store.createRun(newRun());
    expect(await ctx.store.appendEvent(a.runId, { type: 'RunStarted', data: { epoch: 1 } })).toBe(
      1,
    );
    expect(
      await ctx.store.appendEvent(a.runId, { type: 'ModelRequestStarted', data: { turn: 1 } }),
    ).toBe(2);
    expect(await ctx.store.appendEvent(b.runId, { type: 'RunStarted', data: null })).toBe(1);
    expect(await ctx.store.appendEvent(a.runId, { type: 'RunCompleted', data: [1, 2] })).toBe(3);

    const after1 = await ctx.store.listEvents(a.runId, 1);
    expect(after1.map((e) => [e.seq, e.type, e.data])).toEqual([
      [2, 'ModelRequestStarted', { turn: 1 }],
      [3, 'RunCompleted', [1, 2]],
    ]);
    expect(after1[0]?.createdAt).toBeInstanceOf(Date);
    expect((await ctx.store.listEvents(a.runId, 0, 1)).map((e) => e.seq)).toEqual([1]);
    expect(await ctx.store.listEvents(b.runId, 1)).toEqual([]);
  });

  it('keeps sequence numbers unique under concurrent appends', async () => {
    const { runId } = await ctx.store.createRun(newRun());
    const seqs = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        ctx.store.appendEvent(runId, { type: 'ToolCallStarted', data: { i } }),
      ),
    );
    expect([...seqs].sort((x, y) => x - y)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
  });
});
