import { Agent, DELEGATE_TOOL_NAME, definitionHashOf, Engine, Registry, Team } from '@cairn/engine';
import { ScriptedModel, toolResults } from '@cairn/engine/testing';
import { ServedEntityCatalog } from '@cairn/store';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openTestStore, type TestStore } from '../helpers/test-store.js';

let t: TestStore;
beforeEach(async () => {
  t = await openTestStore();
});
afterEach(() => t.close());

function answerer(instructions = 'Answer briefly.'): Agent {
  return new Agent({
    name: 'answerer',
    instructions,
    model: new ScriptedModel({ toolCallIds: 'fresh', decide: ({ messages }) => ({ text: `answer ${messages.length}` }) }),
  });
}

function teamOf(member: Agent): Team {
  return new Team({
    name: 'desk',
    members: [member],
    model: new ScriptedModel({
      toolCallIds: 'fresh',
      decide: ({ messages }) => {
        const [result] = toolResults(messages, DELEGATE_TOOL_NAME);
        return result ? { text: result.content } : { toolCalls: [{ name: DELEGATE_TOOL_NAME, arguments: { member: 'answerer', task: 'go' } }] };
      },
    }),
  });
}

describe('the definition hash of a run', () => {
  it("is stamped at creation from the registry, and a member run carries its member's own hash", async () => {
    const member = answerer();
    const team = teamOf(member);
    const done = await new Engine({ store: t.store }).run(team, 'hello');
    expect(done.status).toBe('COMPLETED');
    expect(done.definitionHash).toBe(definitionHashOf(team));
    const view = (await t.store.getRunView(done.runId))!;
    expect(view.definition_hash).toBe(definitionHashOf(team));
    expect(view.member_runs.map((m) => m.definition_hash)).toEqual([definitionHashOf(member)]);
    expect(definitionHashOf(member)).not.toBe(definitionHashOf(team));
  });

  it('is stamped by a producer from the definition a worker announced most recently', async () => {
    const catalog = new ServedEntityCatalog(t.db);
    const v1 = answerer('Answer briefly.');
    const v2 = answerer('Answer at length.');
    await catalog.record('old-worker', new Registry({ agents: [v1] }).describeAll());
    await new Promise((r) => setTimeout(r, 5));
    await catalog.record('new-worker', new Registry({ agents: [v2] }).describeAll());
    const producer = new Engine({ store: t.store, catalog, workerId: 'producer' });
    const run = await producer.createRun({ entity: { kind: 'agent', name: 'answerer' }, input: 'hi' });
    expect(run.definitionHash).toBe(definitionHashOf(v2));
    expect((await catalog.list()).map((e) => e.definitionHash).sort()).toEqual([definitionHashOf(v1), definitionHashOf(v2)].sort());
  });
});
