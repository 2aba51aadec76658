/**
 * Entities for the deadline scenarios, on scripted models with fresh
 * tool-call ids (as a real model returns them):
 * - `stepper`: a quick step (its batch is committed), then a long step that
 *   waits on its signal for as many ms as the last user message says
 *   (`... 60000 ms ...`), then an answer; every step writes to the tool
 *   ledger (`CAIRN_TOOL_LEDGER`) when it starts, finishes, or is aborted
 *   (with the abort reason's class name);
 * - `bounded`: `stepper` with `maxDurationMs` (`DEADLINE_MAX_DURATION_MS`,
 *   default 60 s): the deadline of its runs created without one;
 * - `deadline-team`: delegates the task to its member `stepper` once, then
 *   answers with the member's answer.
 */
import { Agent, DELEGATE_TOOL_NAME, Registry, Team, tool } from '@cairn/engine';
import { ScriptedModel, toolResults, type ScriptContext } from '@cairn/engine/testing';
import { recordExecution } from '@cairn/research-team';
import { z } from 'zod';

/** How long a long step takes when the input names no duration. */
export const DEFAULT_LONG_STEP_MS = 60_000;

/** The ledger entry of a step's event: `long_step:aborted:DeadlineExceededError`, `quick_step:finished`. */
export function ledgerKey(step: string, event: string): string {
  return `${step}:${event}`;
}

/** Resolves after `ms`, or rejects with the signal's reason once it aborts. */
function waitOn(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason as Error);
    const timer = setTimeout(resolve, ms);
    signal.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        reject(signal.reason as Error);
      },
      { once: true },
    );
  });
}

const quickStep = tool({
  name: 'quick_step',
  description: 'A short piece of work',
  parameters: z.object({}),
  execute: (_args, ctx) => {
    recordExecution(ledgerKey('quick_step', 'finished'), ctx.idempotencyKey);
    return 'quick step done';
  },
});

const longStep = tool({
  name: 'long_step',
  description: 'A long piece of work',
  parameters: z.object({ ms: z.number().int().min(0) }),
  timeoutMs: 10 * 60_000,
  execute: async ({ ms }, ctx) => {
    recordExecution(ledgerKey('long_step', 'started'), ctx.idempotencyKey);
    try {
      await waitOn(ms, ctx.signal);
    } catch (error) {
      const reason = ctx.signal.reason as unknown;
      const name = reason instanceof Error ? reason.name : String(reason);
      recordExecution(ledgerKey('long_step', `aborted:${name}`), ctx.idempotencyKey);
      throw error;
    }
    recordExecution(ledgerKey('long_step', 'finished'), ctx.idempotencyKey);
    return `long step of ${ms} ms done`;
  },
});

/** The duration the last user message asks long steps to take. */
function longStepMs(messages: ScriptContext['messages']): number {
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i];
    if (message?.role !== 'user') continue;
    const match = /(\d+) ms/.exec(message.content);
    return match ? Number(match[1]) : DEFAULT_LONG_STEP_MS;
  }
  return DEFAULT_LONG_STEP_MS;
}

/** Quick step, then a long step (again after each new user message), then an answer. */
function stepperScript({ messages }: ScriptContext) {
  const last = messages.at(-1);
  if (toolResults(messages, 'quick_step').length === 0)
    return { toolCalls: [{ name: 'quick_step', arguments: {} }] };
  if (last?.role === 'tool' && last.name === 'long_step')
    return { text: `finished: ${last.content}` };
  return { toolCalls: [{ name: 'long_step', arguments: { ms: longStepMs(messages) } }] };
}

/** One delegation of the task, then the member's answer. */
function teamScript({ messages }: ScriptContext) {
  const results = toolResults(messages, DELEGATE_TOOL_NAME);
  if (results.length > 0) return { text: `team: ${results[0]!.content}` };
  const task = messages.find((m) => m.role === 'user')?.content ?? '';
  return {
    toolCalls: [{ name: DELEGATE_TOOL_NAME, arguments: { member: 'stepper', task } }],
  };
}

/** The registry the deadline scenarios' workers load (`CAIRN_REGISTRY`). */
export function createRegistry(): Registry {
  const fresh = { toolCallIds: 'fresh' as const, latencyMs: 20 };
  const stepper = new Agent({
    name: 'stepper',
    model: new ScriptedModel({ ...fresh, decide: stepperScript }),
    tools: [quickStep, longStep],
    checkpoint: 'tool-batch',
  });
  const team = new Team({
    name: 'deadline-team',
    model: new ScriptedModel({ ...fresh, decide: teamScript }),
    members: [stepper],
    checkpoint: 'tool-batch',
  });
  const bounded = new Agent({
    name: 'bounded',
    model: new ScriptedModel({ ...fresh, decide: stepperScript }),
    tools: [quickStep, longStep],
    checkpoint: 'tool-batch',
    maxDurationMs: Number(process.env.DEADLINE_MAX_DURATION_MS ?? 60_000),
  });
  return new Registry({ agents: [stepper, bounded], teams: [team] });
}
