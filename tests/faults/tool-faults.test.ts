import { Agent, Engine, Registry, tool, type ToolResultMessage } from '@cairn/engine';
import { ScriptedModel, toolResults } from '@cairn/engine/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { openTestStore, type TestStore } from '../helpers/test-store.js';

let t: TestStore;
beforeEach(async () => {
  t = await openTestStore();
});
afterEach(async () => {
  await t.close();
});

const TIMEOUT_MS = 200;

/** Tools that fail in every way a tool can, each in its own manner. */
const faultyTools = [
  tool({
    name: 'throws',
    description: 'Throws an Error',
    parameters: z.object({}),
    execute: () => {
      throw new Error('disk on fire');
    },
  }),
  tool({
    name: 'rejects_non_error',
    description: 'Rejects with a plain string',
    parameters: z.object({}),
    execute: () => Promise.reject('just a string'),
  }),
  tool({
    name: 'hangs',
    description: 'Never settles and ignores its abort signal',
    parameters: z.object({}),
    timeoutMs: TIMEOUT_MS,
    execute: () => new Promise(() => undefined),
  }),
  tool({
    name: 'bigint',
    description: 'Returns a BigInt',
    parameters: z.object({}),
    execute: () => ({ total: 10n }),
  }),
  tool({
    name: 'cyclic',
    description: 'Returns a cyclic object',
    parameters: z.object({}),
    execute: () => {
      const node: Record<string, unknown> = {};
      node.self = node;
      return node;
    },
  }),
  tool({ name: 'fine', description: 'Works', parameters: z.object({}), execute: () => 'ok' }),
];

/** Calls every tool in one batch, then answers listing which results were errors. */
const callEverything = new ScriptedModel({
  decide: ({ messages }) => {
    const results = toolResults(messages);
    if (results.length === 0)
      return { toolCalls: faultyTools.map((t) => ({ name: t.name, arguments: {} })) };
    return { text: results.map((r) => `${r.name}:${r.isError ? 'error' : 'ok'}`).join(' ') };
  },
});

describe('tool faults', () => {
  it('turns a throw, a hang past the timeout and an unserializable result into tool errors the model sees; the run completes', async () => {
    const engine = new Engine({
      store: t.store,
      registry: new Registry({
        agents: [new Agent({ name: 'faulty', model: callEverything, tools: faultyTools })],
      }),
      workerId: 'faults',
    });
    const run = await engine.createRun({
      entity: { kind: 'agent', name: 'faulty' },
      input: 'go',
      checkpoint: 'tool-batch',
    });
    const started = Date.now();
    const result = await engine.execute(run.runId, { reason: 'run' });
    expect(Date.now() - started).toBeLessThan(TIMEOUT_MS + 3_000);
    expect(result.outcome === 'finished' && result.run).toMatchObject({
      status: 'COMPLETED',
      content: 'throws:error rejects_non_error:error hangs:error bigint:error cyclic:error fine:ok',
    });

    const view = (await t.store.getRunView(run.runId))!;
    const byName = Object.fromEntries(view.tools.map((c) => [c.name, c]));
    expect(Object.fromEntries(view.tools.map((c) => [c.name, c.status]))).toEqual({
      throws: 'error',
      rejects_non_error: 'error',
      hangs: 'error',
      bigint: 'error',
      cyclic: 'error',
      fine: 'completed',
    });
    expect(byName.throws!.result).toBe('Tool "throws" failed: disk on fire');
    expect(byName.rejects_non_error!.result).toBe('Tool "rejects_non_error" failed: just a string');
    expect(byName.hangs!.result).toBe(`Tool "hangs" timed out after ${TIMEOUT_MS} ms.`);
    expect(byName.bigint!.result).toMatch(
      /^Tool "bigint" returned a value that cannot be serialized: .*BigInt/,
    );
    expect(byName.cyclic!.result).toMatch(
      /^Tool "cyclic" returned a value that cannot be serialized: .*circular/i,
    );

    const toolMessages = view.messages.filter(
      (m): m is ToolResultMessage => (m as { role: string }).role === 'tool',
    );
    expect(toolMessages.filter((m) => m.isError).map((m) => m.name)).toEqual([
      'throws',
      'rejects_non_error',
      'hangs',
      'bigint',
      'cyclic',
    ]);
    expect(view.last_checkpoint_at_message_index).toBe(view.messages.length);
  });
});
