import { z } from 'zod';
import { Agent, Registry, tool, type Model, type Tool } from '@cairn/engine';
import {
  ScriptedModel,
  toolResults,
  type ScriptContext,
  type ScriptedReply,
} from '@cairn/engine/testing';
import {
  BATCHES,
  CALLS_PER_BATCH,
  FINAL_ANSWER,
  TOOL_NAME,
  toolArgs,
  toolCallId,
  toolResult,
} from './workload.js';

/** The agent running the benchmark workload. */
export const BENCH_AGENT = 'bench-agent';
/** The same agent whose first tool call blocks the event loop, in the run's first execution only (false-takeover check). */
export const BLOCKER_AGENT = 'bench-blocker';

/** Options of {@link createRegistry}; each falls back to its environment variable (for worker processes). */
export interface BenchRegistryOptions {
  /** Replaces the scripted model. */
  model?: Model;
  /** Tool batches per run. @defaultValue `BENCH_BATCHES` or 3 */
  batches?: number;
  /** Sleep of each tool call. @defaultValue `BENCH_TOOL_MS` or 0 */
  toolMs?: number;
  /** Latency of each scripted model turn. @defaultValue `BENCH_MODEL_MS` or 0 */
  modelMs?: number;
  /** How long the blocker's first call busy-waits. @defaultValue `BENCH_BLOCK_MS` or 3000 */
  blockMs?: number;
  /** Block only in the run's first execution (epoch 1); false blocks in every execution. @defaultValue `BENCH_BLOCK_ALWAYS` unset */
  blockOnce?: boolean;
}

function envNumber(name: string, fallback: number): number {
  const value = Number(process.env[name]);
  return process.env[name] !== undefined && Number.isFinite(value) ? value : fallback;
}

function script(batches: number) {
  return ({ messages, turn }: ScriptContext): ScriptedReply => {
    if (toolResults(messages, TOOL_NAME).length >= batches * CALLS_PER_BATCH)
      return { text: FINAL_ANSWER };
    const calls = [];
    for (let call = 1; call <= CALLS_PER_BATCH; call++)
      calls.push({ name: TOOL_NAME, arguments: toolArgs(turn + 1, call) });
    return { toolCalls: calls };
  };
}

function lookupTool(toolMs: number, blockMs: number, blockOnce: boolean): Tool {
  return tool({
    name: TOOL_NAME,
    description: 'Looks a query up (no-op: returns a fixed text).',
    parameters: z.object({ query: z.string() }),
    execute: async ({ query }, context) => {
      if (
        blockMs > 0 &&
        context.toolCallId === toolCallId(1, 1) &&
        (!blockOnce || context.epoch === 1)
      ) {
        const until = Date.now() + blockMs;
        while (Date.now() < until) {
          // busy-wait: blocks the event loop on purpose
        }
      }
      if (toolMs > 0) await new Promise((resolve) => setTimeout(resolve, toolMs));
      return toolResult(query);
    },
  });
}

/** The benchmark registry: `bench-agent` and `bench-blocker`, checkpointing after every tool batch. */
export function createRegistry(options: BenchRegistryOptions = {}): Registry {
  const batches = options.batches ?? envNumber('BENCH_BATCHES', BATCHES);
  const toolMs = options.toolMs ?? envNumber('BENCH_TOOL_MS', 0);
  const modelMs = options.modelMs ?? envNumber('BENCH_MODEL_MS', 0);
  const blockMs = options.blockMs ?? envNumber('BENCH_BLOCK_MS', 3000);
  const blockOnce = options.blockOnce ?? process.env.BENCH_BLOCK_ALWAYS === undefined;
  const agent = (name: string, block: number) =>
    new Agent({
      name,
      model:
        options.model ??
        new ScriptedModel({ name: 'scripted:bench', decide: script(batches), latencyMs: modelMs }),
      tools: [lookupTool(toolMs, block, blockOnce)],
      checkpoint: 'tool-batch',
      maxTurns: batches + 2,
    });
  return new Registry({ agents: [agent(BENCH_AGENT, 0), agent(BLOCKER_AGENT, blockMs)] });
}
