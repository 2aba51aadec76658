/**
 * Two teams that each have their own `researcher` (different tools and
 * instructions), on scripted models with fresh tool-call ids:
 * - `web-team/researcher` looks the topic up twice with `search_web`;
 * - `paper-team/researcher` looks it up twice with `search_papers`.
 * Each lookup is slow (`SCOPED_STEP_MS`), so a test can kill a worker
 * between the two.
 */
import { Agent, DELEGATE_TOOL_NAME, Registry, Team, tool, type Tool } from '@cairn/engine';
import { firstUserInput, ScriptedModel, toolResults } from '@cairn/engine/testing';
import { recordExecution } from '@cairn/research-team';
import { z } from 'zod';

const fresh = { toolCallIds: 'fresh' as const, latencyMs: 50 };

function lookup(name: string, source: string): Tool {
  return tool({
    name,
    description: `Looks a topic up in ${source}`,
    parameters: z.object({ topic: z.string(), pass: z.number() }),
    execute: async ({ topic, pass }, ctx) => {
      await new Promise((resolve) =>
        setTimeout(resolve, Number(process.env.SCOPED_STEP_MS ?? 1000)),
      );
      recordExecution(name, ctx.idempotencyKey);
      return `${source} on ${topic} (pass ${pass})`;
    },
  });
}

/** A researcher that calls its one tool twice, one batch each, then reports both results under its instructions. */
function researcher(search: Tool, instructions: string): Agent {
  return new Agent({
    name: 'researcher',
    instructions,
    tools: [search],
    checkpoint: 'tool-batch',
    model: new ScriptedModel({
      ...fresh,
      decide: ({ messages, instructions: seen }) => {
        const results = toolResults(messages);
        if (results.length < 2)
          return {
            toolCalls: [
              {
                name: search.name,
                arguments: { topic: firstUserInput(messages), pass: results.length + 1 },
              },
            ],
          };
        return { text: `${seen}: ${results.map((r) => r.content).join('; ')}` };
      },
    }),
  });
}

/** A team that hands the task to its researcher and answers with the report. */
function team(name: string, member: Agent): Team {
  return new Team({
    name,
    members: [member],
    checkpoint: 'tool-batch',
    model: new ScriptedModel({
      ...fresh,
      decide: ({ messages }) => {
        const reports = toolResults(messages, DELEGATE_TOOL_NAME);
        if (reports.length === 0)
          return {
            toolCalls: [
              {
                name: DELEGATE_TOOL_NAME,
                arguments: { member: 'researcher', task: firstUserInput(messages) },
              },
            ],
          };
        return { text: `${name}: ${reports[0]!.content}` };
      },
    }),
  });
}

/** @public The registry the scoped-names scenario's workers load (`CAIRN_REGISTRY`). */
export function createRegistry(): Registry {
  return new Registry({
    teams: [
      team('web-team', researcher(lookup('search_web', 'the web'), 'web researcher')),
      team('paper-team', researcher(lookup('search_papers', 'the papers'), 'paper researcher')),
    ],
  });
}
