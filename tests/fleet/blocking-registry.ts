/**
 * A registry whose one agent calls a tool that blocks its thread's event loop
 * (a CPU-bound tool, a synchronous library call) for BLOCKING_TOOL_MS; with
 * BLOCKING_FIRST_EPOCH_ONLY=1, only in the run's first execution (epoch 1).
 */
import { Agent, Registry, tool } from '@cairn/engine';
import { ScriptedModel, toolResults } from '@cairn/engine/testing';
import { z } from 'zod';

const blockFor = tool({
  name: 'block_event_loop',
  description: 'Busy-waits without yielding',
  parameters: z.object({ ms: z.number() }),
  execute: ({ ms }, ctx) => {
    if (process.env.BLOCKING_FIRST_EPOCH_ONLY === '1' && ctx.epoch > 1)
      return `not blocked at epoch ${ctx.epoch}`;
    const until = Date.now() + ms;
    while (Date.now() < until) {
      // spin: nothing else runs on this thread meanwhile
    }
    return `blocked ${ms} ms`;
  },
});

/** @public `blocker`: one blocking tool call, then a final answer. */
export function createRegistry(): Registry {
  const ms = Number(process.env.BLOCKING_TOOL_MS ?? 3000);
  const model = new ScriptedModel({
    decide: ({ messages }) =>
      toolResults(messages).length === 0
        ? { toolCalls: [{ name: 'block_event_loop', arguments: { ms } }] }
        : { text: `done: ${toolResults(messages)[0]!.content}` },
  });
  return new Registry({
    agents: [new Agent({ name: 'blocker', model, tools: [blockFor], checkpoint: 'tool-batch' })],
  });
}
