import { describe, expect, it } from 'vitest';
import { newRun, useStoreTestContext } from './test-support/store-test-context.js';

const ctx = useStoreTestContext();

/** A team `outer` with a member team `outer/inner`, whose member is `outer/inner/researcher`. */
async function nestedTree() {
  const outer = await ctx.store.createRun(newRun({ entity: { kind: 'team', name: 'outer' } }));
  const inner = await ctx.store.createRun(
    newRun({ entity: { kind: 'team', name: 'outer/inner' }, parentRunId: outer.runId }),
  );
  const researcher = await ctx.store.createRun(
    newRun({ entity: { kind: 'agent', name: 'outer/inner/researcher' }, parentRunId: inner.runId }),
  );
  return { outer, inner, researcher };
}

describe("a run tree's events", () => {
  it('reads the tree in creation order with member paths, and every run’s events after its own cursor, each run in seq order', async () => {
    const { outer, inner, researcher } = await nestedTree();
    await ctx.store.appendEvent(outer.runId, { type: 'RunStarted', data: {} });
    await ctx.store.appendEvent(inner.runId, { type: 'RunStarted', data: {} });
    await ctx.store.appendEvent(researcher.runId, { type: 'RunStarted', data: {} });
    await ctx.store.appendEvent(researcher.runId, {
      type: 'ToolCallStarted',
      data: { name: 'slow_search' },
    });
    await ctx.store.appendEvent(inner.runId, { type: 'RunCompleted', data: {} });

    const all = (await ctx.store.readRunTreeEvents(outer.runId, []))!;
    expect(all.runs.map((r) => [r.runId, r.memberPath])).toEqual([
      [outer.runId, ['outer']],
      [inner.runId, ['outer', 'inner']],
      [researcher.runId, ['outer', 'inner', 'researcher']],
    ]);
    expect(all.events.map((e) => [e.runId, e.seq, e.type])).toEqual([
      [outer.runId, 1, 'RunStarted'],
      [inner.runId, 1, 'RunStarted'],
      [researcher.runId, 1, 'RunStarted'],
      [researcher.runId, 2, 'ToolCallStarted'],
      [inner.runId, 2, 'RunCompleted'],
    ]);

    const after = (await ctx.store.readRunTreeEvents(outer.runId, [1, 1, 1]))!;
    expect(after.events.map((e) => [e.runId, e.seq])).toEqual([
      [researcher.runId, 2],
      [inner.runId, 2],
    ]);
    // A member team's own tree: itself and the run below it.
    const sub = (await ctx.store.readRunTreeEvents(inner.runId, [2]))!;
    expect(sub.runs.map((r) => r.runId)).toEqual([inner.runId, researcher.runId]);
    expect(sub.events.map((e) => [e.runId, e.seq])).toEqual([
      [researcher.runId, 1],
      [researcher.runId, 2],
    ]);
    expect(await ctx.store.readRunTreeEvents('no-such-run', [])).toBeUndefined();
  });

  it('derives the path of a member stored under a plain name from its parent runs', async () => {
    const team = await ctx.store.createRun(
      newRun({ entity: { kind: 'team', name: 'research-team' } }),
    );
    const member = await ctx.store.createRun(
      newRun({ entity: { kind: 'agent', name: 'researcher' }, parentRunId: team.runId }),
    );
    const read = (await ctx.store.readRunTreeEvents(team.runId, []))!;
    expect(read.runs.find((r) => r.runId === member.runId)?.memberPath).toEqual([
      'research-team',
      'researcher',
    ]);
  });

  it("leaves a member's ActionDecided out of its root's tree (the root's stream holds its copy), not out of the member's own", async () => {
    const team = await ctx.store.createRun(newRun({ entity: { kind: 'team', name: 'ops-team' } }));
    const member = await ctx.store.createRun(
      newRun({ entity: { kind: 'agent', name: 'ops-team/ops-agent' }, parentRunId: team.runId }),
    );
    const decided = {
      type: 'ActionDecided',
      data: { action_id: 'act-1', type: 'approve', member_path: ['ops-team', 'ops-agent'] },
    };
    await ctx.store.appendEvent(member.runId, { type: 'ToolCallStarted', data: {} });
    await ctx.store.appendEvent(member.runId, decided);
    await ctx.store.appendEvent(team.runId, decided);
    const read = (await ctx.store.readRunTreeEvents(team.runId, []))!;
    expect(read.events.map((e) => [e.runId, e.type])).toEqual([
      [member.runId, 'ToolCallStarted'],
      [team.runId, 'ActionDecided'],
    ]);
    const own = (await ctx.store.readRunTreeEvents(member.runId, []))!;
    expect(own.events.map((e) => e.type)).toEqual(['ToolCallStarted', 'ActionDecided']);
  });
});
