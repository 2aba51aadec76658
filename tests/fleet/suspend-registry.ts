/**
 * Entities for the suspend scenarios, on scripted models:
 * - `waiter`: a quick step, then a long wait, then an answer. The wait
 *   lasts `SUSPEND_WAIT_MS` (default 60 s) and follows `ctx.signal`: the
 *   ledger records `long_wait_started` when it starts, `long_wait` when it
 *   ends and `long_wait_aborted` when its signal aborts it;
 * - `flaky`: its one tool SIGKILLs the worker executing it, unless the
 *   worker runs with `SUSPEND_FIXED=1` (the fix deployed);
 * - `wait-team`: delegates one task to `waiter`, then answers with its result.
 */
import { Agent, DELEGATE_TOOL_NAME, Registry, Team, tool } from '@cairn/engine';
import { ScriptedModel, toolResults, type ScriptContext } from '@cairn/engine/testing';
import { recordExecution } from '@cairn/research-team';
import { z } from 'zod';

const quickStep = tool({
  name: 'quick_step',
  description: 'A short step',
  parameters: z.object({}),
  execute: (_args, ctx) => {
    recordExecution('quick_step', ctx.idempotencyKey);
    return 'stepped';
  },
});

const longWait = tool({
  name: 'long_wait',
  description: 'Waits for a long while, unless aborted',
  parameters: z.object({}),
  execute: async (_args, ctx) => {
    recordExecution('long_wait_started', ctx.idempotencyKey);
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(resolve, Number(process.env.SUSPEND_WAIT_MS ?? 60_000));
      ctx.signal.addEventListener(
        'abort',
        () => {
          clearTimeout(timer);
          recordExecution('long_wait_aborted', ctx.idempotencyKey);
          reject(ctx.signal.reason as Error);
        },
        { once: true },
      );
    });
    recordExecution('long_wait', ctx.idempotencyKey);
    return 'waited';
  },
});

const flakyStep = tool({
  name: 'flaky_step',
  description: 'Kills the process executing it until the fix is deployed',
  parameters: z.object({}),
  execute: (_args, ctx) => {
    recordExecution('flaky_step', ctx.idempotencyKey);
    if (process.env.SUSPEND_FIXED !== '1') process.kill(process.pid, 'SIGKILL');
    return 'fixed';
  },
});

function waiterScript({ messages }: ScriptContext) {
  const done = toolResults(messages).length;
  if (done === 0) return { toolCalls: [{ name: 'quick_step', arguments: {} }] };
  if (done === 1) return { toolCalls: [{ name: 'long_wait', arguments: {} }] };
  return { text: 'waited long enough' };
}

/** @public The registry the suspend scenarios' workers load (`CAIRN_REGISTRY`). */
export function createRegistry(): Registry {
  const waiter = new Agent({
    name: 'waiter',
    model: new ScriptedModel({ decide: waiterScript }),
    tools: [quickStep, longWait],
    checkpoint: 'tool-batch',
  });
  const flaky = new Agent({
    name: 'flaky',
    model: new ScriptedModel({
      decide: ({ messages }) =>
        toolResults(messages).length === 0
          ? { toolCalls: [{ name: 'flaky_step', arguments: {} }] }
          : { text: 'it worked' },
    }),
    tools: [flakyStep],
    checkpoint: 'tool-batch',
  });
  const team = new Team({
    name: 'wait-team',
    model: new ScriptedModel({
      decide: ({ messages }) => {
        const results = toolResults(messages, DELEGATE_TOOL_NAME);
        if (results.length === 0)
          return {
            toolCalls: [
              { name: DELEGATE_TOOL_NAME, arguments: { member: 'waiter', task: 'wait' } },
            ],
          };
        return { text: `team: ${results[0]!.content}` };
      },
    }),
    members: [waiter],
    checkpoint: 'tool-batch',
  });
  return new Registry({ agents: [waiter, flaky], teams: [team] });
}
