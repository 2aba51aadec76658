import { Agent, Engine, Registry, tool } from '@cairn/engine';
import { ScriptedModel, toolResults } from '@cairn/engine/testing';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { z } from 'zod';
import { openTestStore, type TestStore } from '../helpers/test-store.js';

let t: TestStore;
beforeEach(async () => {
  t = await openTestStore();
});
afterEach(async () => {
  await t.close();
});

it("a tool call's args keep one type in the run view: the parsed object while it runs and once it finished", async () => {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let started!: () => void;
  const running = new Promise<void>((resolve) => (started = resolve));
  const lookup = tool({
    name: 'lookup',
    description: 'Looks an item up',
    parameters: z.object({ item: z.string(), depth: z.number() }),
    execute: async ({ item }) => {
      started();
      await released;
      return `found ${item}`;
    },
  });
  const agent = new Agent({
    name: 'looker',
    tools: [lookup],
    checkpoint: 'tool-call',
    model: new ScriptedModel({
      decide: ({ messages }) =>
        toolResults(messages).length === 0
          ? { toolCalls: [{ name: 'lookup', arguments: { item: 'mug', depth: 2 } }] }
          : { text: 'done' },
    }),
  });
  const engine = new Engine({
    store: t.store,
    registry: new Registry({ agents: [agent] }),
    workerId: 'w',
  });
  const run = await engine.createRun({
    entity: { kind: 'agent', name: 'looker' },
    input: 'find the mug',
  });
  const execution = engine.execute(run.runId, { reason: 'run' });

  await running;
  const whileRunning = (await t.store.getRunView(run.runId))!.tools;
  expect(whileRunning.map((c) => [c.status, c.args])).toEqual([
    ['running', { item: 'mug', depth: 2 }],
  ]);
  release();
  await execution;
  const finished = (await t.store.getRunView(run.runId))!.tools;
  expect(finished.map((c) => [c.status, c.args])).toEqual([
    ['completed', { item: 'mug', depth: 2 }],
  ]);
});
