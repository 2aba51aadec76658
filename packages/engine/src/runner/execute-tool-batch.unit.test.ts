import { SYSTEM_CLOCK } from '../engine-resources.js';
import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { tool } from '../tool.js';
import { executeToolBatch, type ToolBatchContext } from './execute-tool-batch.js';
import { executableFromTool } from '../executable-tool.js';

const seen: { args: unknown; key: string; epoch: number }[] = [];
const tools = [
  tool({
    name: 'add',
    description: 'Adds',
    parameters: z.object({ a: z.number(), b: z.number() }),
    execute: ({ a, b }, ctx) => {
      seen.push({ args: { a, b }, key: ctx.idempotencyKey, epoch: ctx.epoch });
      return { sum: a + b };
    },
  }),
  tool({
    name: 'boom',
    description: 'Throws',
    parameters: z.object({}),
    execute: () => {
      throw new Error('disk on fire');
    },
  }),
  tool({
    name: 'slow',
    description: 'Hangs',
    parameters: z.object({}),
    timeoutMs: 50,
    execute: (_args, ctx) =>
      new Promise((resolve) => ctx.signal.addEventListener('abort', () => resolve('late'))),
  }),
  tool({
    name: 'cyclic',
    description: 'Returns a cycle',
    parameters: z.object({}),
    execute: () => {
      const o: Record<string, unknown> = {};
      o.self = o;
      return o;
    },
  }),
];

function context(signal = new AbortController().signal): ToolBatchContext {
  return {
    runId: 'run-1',
    epoch: 3,
    batch: 2,
    signal,
    tools: new Map(tools.map((t) => [t.name, executableFromTool(t)])),
    clock: SYSTEM_CLOCK,
  };
}

describe('executeToolBatch', () => {
  it('runs the calls of one turn and passes idempotency key and epoch', async () => {
    const [outcome] = await executeToolBatch(
      [{ id: 'c1', name: 'add', arguments: '{"a":2,"b":3}' }],
      context(),
    );
    expect(outcome!.message).toEqual({
      role: 'tool',
      toolCallId: 'c1',
      name: 'add',
      content: '{"sum":5}',
    });
    expect(outcome!.record).toMatchObject({
      status: 'completed',
      batch: 2,
      idempotencyKey: 'run-1:c1',
      args: { a: 2, b: 3 },
    });
    expect(seen.at(-1)).toEqual({ args: { a: 2, b: 3 }, key: 'run-1:c1', epoch: 3 });
  });

  it('turns every kind of failure into an error the model sees', async () => {
    const outcomes = await executeToolBatch(
      [
        { id: 'u', name: 'nope', arguments: '{}' },
        { id: 'j', name: 'add', arguments: '{"a":1,' },
        { id: 'v', name: 'add', arguments: '{"a":"x","b":1}' },
        { id: 't', name: 'boom', arguments: '{}' },
        { id: 's', name: 'slow', arguments: '{}' },
        { id: 'c', name: 'cyclic', arguments: '{}' },
      ],
      context(),
    );
    const texts = outcomes.map((o) => o.message.content);
    expect(outcomes.every((o) => o.message.isError && o.record.status === 'error')).toBe(true);
    expect(texts[0]).toBe('Unknown tool "nope". Available tools: add, boom, slow, cyclic.');
    expect(texts[1]).toMatch(/^Invalid JSON in arguments for tool "add": /);
    expect(texts[2]).toMatch(/^Invalid arguments for tool "add": .*a/s);
    expect(texts[3]).toBe('Tool "boom" failed: disk on fire');
    expect(texts[4]).toBe('Tool "slow" timed out after 50 ms.');
    expect(texts[5]).toMatch(/^Tool "cyclic" returned a value that cannot be serialized/);
  });

  it('rejects when the run is aborted mid-batch', async () => {
    const controller = new AbortController();
    const batch = executeToolBatch([{ id: 's', name: 'slow', arguments: '{}' }], {
      ...context(controller.signal),
      tools: new Map([['slow', { ...executableFromTool(tools[2]!), timeoutMs: 10_000 }]]),
    });
    controller.abort(new Error('cancelled by user'));
    await expect(batch).rejects.toThrow('cancelled by user');
  });

  it('a wide batch adds one abort listener to the run signal, not one per call, and still aborts every call', async () => {
    const calls = 2_000;
    const controller = new AbortController();
    const callSignals: AbortSignal[] = [];
    let allStarted!: () => void;
    const started = new Promise<void>((resolve) => (allStarted = resolve));
    const hang = tool({
      name: 'hang',
      description: 'Waits for the abort',
      parameters: z.object({}),
      execute: (_args, ctx) => {
        callSignals.push(ctx.signal);
        if (callSignals.length === calls) allStarted();
        return new Promise((resolve) =>
          ctx.signal.addEventListener('abort', () => resolve('late')),
        );
      },
    });
    const batch = executeToolBatch(
      Array.from({ length: calls }, (_, i) => ({ id: `h${i}`, name: 'hang', arguments: '{}' })),
      { ...context(controller.signal), tools: new Map([['hang', executableFromTool(hang)]]) },
    );
    await started;
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(1);
    controller.abort(new Error('cancelled by user'));
    await expect(batch).rejects.toThrow('cancelled by user');
    expect(callSignals.every((signal) => signal.aborted)).toBe(true);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });
});
