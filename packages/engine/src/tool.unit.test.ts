import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { UserError } from './errors.js';
import { Agent } from './agent.js';
import { tool } from './tool.js';
import { ScriptedModel } from './testing/scripted-model.js';

const echo = tool({
  name: 'echo',
  description: 'Echoes a word',
  parameters: z.object({ word: z.string() }),
  execute: ({ word }) => word,
});

describe('tool()', () => {
  it('sends the zod schema to the model as JSON Schema', () => {
    expect(echo.spec).toEqual({
      name: 'echo',
      description: 'Echoes a word',
      parameters: {
        type: 'object',
        properties: { word: { type: 'string' } },
        required: ['word'],
        additionalProperties: false,
      },
    });
  });

  it('refuses a schema that is not a z.object', () => {
    expect(() =>
      tool({
        name: 'bad',
        description: '',
        parameters: z.string() as never,
        execute: (): number => 1,
      }),
    ).toThrow(new UserError('tool "bad": parameters must be a z.object(...) schema'));
  });

  it('refuses an invalid name', () => {
    expect(() =>
      tool({
        name: 'has space',
        description: '',
        parameters: z.object({}),
        execute: (): number => 1,
      }),
    ).toThrow(/tool name "has space" is invalid/);
  });

  it('refuses two tools with the same name on one agent', () => {
    const model = new ScriptedModel({ decide: () => ({ text: 'hi' }) });
    expect(() => new Agent({ name: 'a', model, tools: [echo, echo] })).toThrow(
      new UserError('agent "a": duplicate tool name "echo"'),
    );
  });
});

describe('tool() human-in-the-loop options', () => {
  const parameters = z.object({ service: z.string() });
  const context = { runId: 'r', toolCallId: 'c', signal: new AbortController().signal };

  it('gates every call of a tool with needsApproval: true, with no expiry by default', async () => {
    const restart = tool({
      name: 'restart',
      description: '',
      parameters,
      needsApproval: true,
      execute: () => 'ok',
    });
    expect(await restart.isGated({ service: 'api' }, context)).toBe(true);
    expect(restart.approval).toEqual({ timeoutMs: null, onTimeout: 'reject' });
    expect(restart.external).toBe(false);
  });

  it('gates per call when needsApproval is a function of the arguments and context', async () => {
    const seen: unknown[] = [];
    const restart = tool({
      name: 'restart',
      description: '',
      parameters,
      needsApproval: async ({ service }, ctx) => {
        seen.push(ctx.toolCallId);
        return service === 'db';
      },
      execute: () => 'ok',
    });
    expect(await restart.isGated({ service: 'db' }, context)).toBe(true);
    expect(await restart.isGated({ service: 'cache' }, context)).toBe(false);
    expect(seen).toEqual(['c', 'c']);
  });

  it('never gates a plain tool, and has no approval settings', async () => {
    expect(await echo.isGated({ word: 'x' }, context)).toBe(false);
    expect(echo.approval).toBeNull();
  });

  it('gates every call of an external tool, whose execute refuses to run', async () => {
    const ask = tool({
      name: 'ask',
      description: '',
      parameters,
      external: true,
      approval: { timeoutMs: 5_000, onTimeout: 'error' },
    });
    expect(ask.external).toBe(true);
    expect(await ask.isGated({ service: 'x' }, context)).toBe(true);
    expect(ask.approval).toEqual({ timeoutMs: 5_000, onTimeout: 'error' });
    expect(() =>
      ask.execute(
        { service: 'x' },
        { ...context, idempotencyKey: 'k', epoch: 1, context: undefined },
      ),
    ).toThrow(UserError);
  });

  it.each([
    [
      'external with execute',
      { external: true, execute: (): number => 1 },
      'tool "t": an external tool has no execute (its result is supplied by a decision)',
    ],
    [
      'external with needsApproval',
      { external: true, needsApproval: true },
      'tool "t": needsApproval does not apply to an external tool (every call waits for its result)',
    ],
    [
      'neither execute nor external',
      {},
      'tool "t": execute must be a function (or set external: true)',
    ],
    [
      'approval on an ungated tool',
      { execute: (): number => 1, approval: { timeoutMs: 1000 } },
      'tool "t": approval applies only to a gated tool (set needsApproval or external)',
    ],
    [
      'approval with needsApproval: false',
      { execute: (): number => 1, needsApproval: false, approval: { timeoutMs: 1000 } },
      'tool "t": approval applies only to a gated tool (set needsApproval or external)',
    ],
    [
      'a negative timeout',
      { execute: (): number => 1, needsApproval: true, approval: { timeoutMs: -5 } },
      'tool "t": approval.timeoutMs must be a positive integer of milliseconds',
    ],
    [
      'a fractional timeout',
      { execute: (): number => 1, needsApproval: true, approval: { timeoutMs: 1.5 } },
      'tool "t": approval.timeoutMs must be a positive integer of milliseconds',
    ],
    [
      'a timeout given as text',
      { execute: (): number => 1, needsApproval: true, approval: { timeoutMs: '1000' } },
      'tool "t": approval.timeoutMs must be a positive integer of milliseconds',
    ],
    [
      'an unknown onTimeout',
      {
        execute: (): number => 1,
        needsApproval: true,
        approval: { timeoutMs: 10, onTimeout: 'approve' },
      },
      'tool "t": approval.onTimeout must be one of reject, error',
    ],
    [
      'onTimeout without a timeout',
      { execute: (): number => 1, needsApproval: true, approval: { onTimeout: 'error' } },
      'tool "t": approval.onTimeout needs approval.timeoutMs',
    ],
    [
      'a misspelled approval option',
      { execute: (): number => 1, needsApproval: true, approval: { timeout: 10 } },
      'tool "t": approval.timeout is not an option (timeoutMs, onTimeout)',
    ],
    [
      'needsApproval as text',
      { execute: (): number => 1, needsApproval: 'yes' },
      'tool "t": needsApproval must be a boolean or a function of the arguments',
    ],
    ['external as text', { external: 'yes' }, 'tool "t": external must be true or false'],
  ])('refuses %s', (_case, extra, message) => {
    expect(() =>
      tool({ name: 't', description: '', parameters, ...(extra as object) } as never),
    ).toThrow(new UserError(message));
  });
});
