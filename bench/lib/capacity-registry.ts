import { z } from 'zod';
import { Agent, OpenAIChatModel, Registry, tool } from '@cairn/engine';
import { toolResults, type ScriptContext, type ScriptedReply } from '@cairn/engine/testing';

/**
 * The capacity benchmark's registry module (`CAIRN_REGISTRY` of its
 * workers, and the producer's registry): one agent per model on the fake
 * OpenAI server, each run two model turns (a tool call, then the answer)
 * around one no-op tool batch.
 */

/** The no-op tool the first turn calls. */
const TOOL_NAME = 'note';

/** Options of {@link createRegistry}; each falls back to its environment variable (for worker processes). */
export interface CapacityRegistryOptions {
  /** The fake server's base URL (ending in `/v1`). @defaultValue `BENCH_OPENAI_URL` */
  baseUrl?: string;
  /** Model ids on that server, one agent each. @defaultValue `BENCH_CAP_MODELS`, comma-separated */
  models?: readonly string[];
}

/** The agent that runs on model id `model`. */
export function capacityAgent(model: string): string {
  return `cap-${model}`;
}

/** What the fake server answers (its `decide`): a tool call first, the answer once the tool's result is in. */
export function capacityScript({ messages }: ScriptContext): ScriptedReply {
  return toolResults(messages, TOOL_NAME).length > 0
    ? { text: 'Noted.' }
    : { toolCalls: [{ name: TOOL_NAME, arguments: { text: 'capacity benchmark' } }] };
}

/** The registry: agent `cap-<model>` on `openai-chat:<model>` for each model, checkpointing after its tool batch. */
export function createRegistry(options: CapacityRegistryOptions = {}): Registry {
  const baseURL = options.baseUrl ?? process.env.BENCH_OPENAI_URL;
  if (!baseURL) throw new Error('capacity registry: BENCH_OPENAI_URL is not set');
  const models = options.models ?? (process.env.BENCH_CAP_MODELS ?? '').split(',').filter(Boolean);
  const note = tool({
    name: TOOL_NAME,
    description: 'Notes a text (no-op).',
    parameters: z.object({ text: z.string() }),
    execute: ({ text }) => Promise.resolve(`noted: ${text}`),
  });
  return new Registry({
    agents: models.map(
      (model) =>
        new Agent({
          name: capacityAgent(model),
          model: new OpenAIChatModel({ model, baseURL, apiKey: 'bench', stream: false }),
          tools: [note],
          checkpoint: 'tool-batch',
          maxTurns: 4,
        }),
    ),
  });
}
