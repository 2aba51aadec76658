/**
 * Entities for the lifecycle scenarios, all on scripted models with fresh
 * tool-call ids (as a real model returns them):
 * - `crasher`: its one tool SIGKILLs the worker executing it, every time;
 * - `echo`: one slow step, then answers the last user message (its model
 *   takes `LIFECYCLE_MODEL_MS` a turn, its step `LIFECYCLE_STEP_MS`);
 * - `pair-team`: delegates two tasks to `echo` in one turn (two parallel
 *   delegations to the same member), then joins their answers.
 */
import { Agent, DELEGATE_TOOL_NAME, Registry, Team, tool } from '@cairn/engine';
import {
  ScriptedModel,
  toolResults,
  type ScriptContext,
  type ScriptedReply,
} from '@cairn/engine/testing';
import { recordExecution } from '@cairn/research-team';
import { z } from 'zod';

const crashWorker = tool({
  name: 'crash_worker',
  description: 'Kills the process executing it',
  parameters: z.object({}),
  execute: (_args, ctx) => {
    recordExecution('crash_worker', ctx.idempotencyKey);
    process.kill(process.pid, 'SIGKILL');
    return 'unreachable';
  },
});

const slowStep = tool({
  name: 'slow_step',
  description: 'Works on the task for a while',
  parameters: z.object({ about: z.string() }),
  execute: async ({ about }, ctx) => {
    await new Promise((resolve) =>
      setTimeout(resolve, Number(process.env.LIFECYCLE_STEP_MS ?? 1500)),
    );
    recordExecution('slow_step', ctx.idempotencyKey);
    return `worked on ${about}`;
  },
});

/** The last user message of a history. */
function lastUserInput(messages: ScriptContext['messages']): string {
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i];
    if (message?.role === 'user') return message.content;
  }
  return '';
}

/** One slow step per user message, then an answer to it. */
function echoScript({ messages }: ScriptContext): ScriptedReply {
  const last = messages.at(-1);
  const input = lastUserInput(messages);
  if (last?.role === 'user')
    return { toolCalls: [{ name: 'slow_step', arguments: { about: input } }] };
  return { text: `answered: ${input}` };
}

/** Two delegations to `echo` in one turn, then both answers. */
function pairScript({ messages }: ScriptContext): ScriptedReply {
  const results = toolResults(messages, DELEGATE_TOOL_NAME);
  if (results.length === 0) {
    return {
      toolCalls: [
        { name: DELEGATE_TOOL_NAME, arguments: { member: 'echo', task: 'task A' } },
        { name: DELEGATE_TOOL_NAME, arguments: { member: 'echo', task: 'task B' } },
      ],
    };
  }
  return { text: results.map((r) => r.content).join(' | ') };
}

/** @public The registry the lifecycle scenarios' workers load (`CAIRN_REGISTRY`). */
export function createRegistry(): Registry {
  const fresh = { toolCallIds: 'fresh' as const, latencyMs: 50 };
  const echoModel = new ScriptedModel({
    ...fresh,
    latencyMs: Number(process.env.LIFECYCLE_MODEL_MS ?? 50),
    decide: echoScript,
  });
  const echo = new Agent({
    name: 'echo',
    model: echoModel,
    tools: [slowStep],
    checkpoint: 'tool-batch',
  });
  const crasher = new Agent({
    name: 'crasher',
    model: new ScriptedModel({
      ...fresh,
      decide: ({ messages }) =>
        toolResults(messages).length === 0
          ? { toolCalls: [{ name: 'crash_worker', arguments: {} }] }
          : { text: 'survived' },
    }),
    tools: [crashWorker],
    checkpoint: 'tool-batch',
  });
  const team = new Team({
    name: 'pair-team',
    model: new ScriptedModel({ ...fresh, decide: pairScript }),
    members: [echo],
    checkpoint: 'tool-batch',
  });
  return new Registry({ agents: [crasher], teams: [team] });
}
