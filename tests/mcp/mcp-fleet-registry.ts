/**
 * The registry of the MCP fleet scenario: `mcp-researcher` looks its topic up {@link MCP_STEPS}
 * times, one knowledge-base call a turn (fresh tool-call ids, as a real model's), through the
 * knowledge-base server over stdio that each worker spawns (`MCP_KB_SERVER` names its script;
 * `MCP_LEDGER` and `MCP_STALL_EPOCH` are handed to it).
 */
import { Agent, Registry } from '@cairn/engine';
import { mcpTools } from '@cairn/engine/mcp';
import { firstUserInput, ScriptedModel, toolResults } from '@cairn/engine/testing';

/** Lookups a run makes, one a turn. */
export const MCP_STEPS = 3;

/** @public The registry: the knowledge base's `lookup` as `kb_lookup`. */
export async function createRegistry(): Promise<Registry> {
  const script = process.env.MCP_KB_SERVER;
  if (!script) throw new Error('MCP_KB_SERVER must name the knowledge-base server script');
  const env = Object.fromEntries(
    ['MCP_LEDGER', 'MCP_STALL_EPOCH'].flatMap((name) => {
      const value = process.env[name];
      return value ? [[name, value]] : [];
    }),
  );
  const tools = await mcpTools({
    server: { command: process.execPath, args: ['--import', 'tsx', script], env },
    prefix: 'kb',
    include: ['lookup'],
  });
  const researcher = new Agent({
    name: 'mcp-researcher',
    tools,
    checkpoint: 'tool-batch',
    model: new ScriptedModel({
      name: 'scripted:mcp-researcher',
      toolCallIds: 'fresh',
      decide: ({ messages }) => {
        const results = toolResults(messages);
        if (results.length < MCP_STEPS) {
          const topic = `${firstUserInput(messages)} ${results.length + 1}`;
          return { toolCalls: [{ name: 'kb_lookup', arguments: { topic } }] };
        }
        return { text: results.map((r) => r.content).join(' | ') };
      },
    }),
  });
  return new Registry({ agents: [researcher] });
}
