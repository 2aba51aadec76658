import {
  Agent,
  Engine,
  LeaseLostError,
  MAX_TOOL_CALLS_PER_TURN,
  ModelError,
  OpenAIChatModel,
  Registry,
  tool,
  type Model,
  type ModelRequest,
  type ModelResponse,
} from '@cairn/engine';
import {
  ScriptedModel,
  startFakeOpenAIServer,
  toolResults,
  type FakeOpenAIServer,
} from '@cairn/engine/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { openTestStore, type TestStore } from '../helpers/test-store.js';

let t: TestStore;
let server: FakeOpenAIServer | undefined;
beforeEach(async () => {
  t = await openTestStore();
});
afterEach(async () => {
  await server?.close();
  server = undefined;
  await t.close();
});

const FAST_RETRY = { maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 5 };
const ping = tool({
  name: 'ping',
  description: 'Answers pong',
  parameters: z.object({}),
  execute: () => 'pong',
});

/** Answers with one ping, then a final text quoting the tool result. */
const pingThenAnswer = new ScriptedModel({
  decide: ({ messages }) =>
    toolResults(messages).length === 0
      ? { toolCalls: [{ name: 'ping', arguments: {} }] }
      : { text: `got ${toolResults(messages)[0]!.content}` },
});

/** A model that fails `failures` times with the given error before delegating to `inner`. */
function flaky(inner: Model, failures: ModelError[]): Model & { calls: number } {
  return {
    name: 'flaky',
    calls: 0,
    async respond(request: ModelRequest): Promise<ModelResponse> {
      this.calls += 1;
      const failure = failures.shift();
      if (failure) throw failure;
      return inner.respond(request);
    },
  };
}

function engineWith(agent: Agent): Engine {
  return new Engine({
    store: t.store,
    registry: new Registry({ agents: [agent] }),
    workerId: 'w',
    retry: FAST_RETRY,
  });
}

async function runAgent(
  engine: Engine,
  checkpoint: 'run' | 'tool-batch' | 'tool-call' = 'tool-batch',
) {
  const run = await engine.createRun({
    entity: { kind: 'agent', name: 'pinger' },
    input: 'ping please',
    checkpoint,
  });
  const result = await engine.execute(run.runId, { reason: 'run' });
  if (result.outcome !== 'finished') throw new Error('expected a finished run');
  return result.run;
}

describe('model failures', () => {
  it('retries transient errors (429, 5xx) with backoff and completes', async () => {
    const model = flaky(pingThenAnswer, [
      new ModelError('rate limited', true, 429),
      new ModelError('bad gateway', true, 502),
    ]);
    const run = await runAgent(engineWith(new Agent({ name: 'pinger', model, tools: [ping] })));
    expect(run.status).toBe('COMPLETED');
    expect(run.content).toBe('got pong');
    expect(model.calls).toBe(4);
  });

  it('ends in ERROR with the error recorded when retries run out, and stays continuable', async () => {
    const model = flaky(pingThenAnswer, [
      new ModelError('overloaded', true, 503),
      new ModelError('overloaded', true, 503),
      new ModelError('overloaded', true, 503),
    ]);
    const engine = engineWith(new Agent({ name: 'pinger', model, tools: [ping] }));
    const failed = await runAgent(engine);
    expect(failed.status).toBe('ERROR');
    expect(failed.error).toEqual({ name: 'ModelError', message: 'overloaded', retryable: true });

    expect((await engine.continueRun(failed.runId)).action).toBe('resume');
    const resumed = await engine.execute(failed.runId, { reason: 'continue' });
    expect(resumed.outcome === 'finished' && resumed.run.status).toBe('COMPLETED');
  });

  it('does not retry a 400: ERROR at once, and a continue resumes from the last checkpoint', async () => {
    let failNext = false;
    const model: Model = {
      name: 'picky',
      respond: async (request) => {
        if (failNext) throw new ModelError('model request failed: 400 bad request', false, 400);
        failNext = toolResults(request.messages).length === 0;
        return pingThenAnswer.respond(request);
      },
    };
    const engine = engineWith(new Agent({ name: 'pinger', model, tools: [ping] }));
    const failed = await runAgent(engine);
    expect(failed).toMatchObject({ status: 'ERROR', lastCheckpointAtMessageIndex: 3 });
    expect(failed.error?.message).toContain('400');

    failNext = false;
    const resumed = await engine.execute(failed.runId, { reason: 'continue' });
    const view = (await t.store.getRunView(failed.runId))!;
    expect(resumed.outcome === 'finished' && resumed.run.content).toBe('got pong');
    expect(view.tools).toHaveLength(1);
    expect(view.attempts.map((a) => a.outcome)).toEqual(['error', 'completed']);
  });
});

describe('limits', () => {
  it('ends in ERROR naming maxTurns when the model never answers', async () => {
    const looping = new ScriptedModel({
      decide: () => ({ toolCalls: [{ name: 'ping', arguments: {} }] }),
    });
    const run = await runAgent(
      engineWith(new Agent({ name: 'pinger', model: looping, tools: [ping], maxTurns: 3 })),
    );
    expect(run.status).toBe('ERROR');
    expect(run.error).toMatchObject({ name: 'MaxTurnsExceededError' });
    expect(run.error?.message).toContain('maxTurns (3)');
    expect(run.lastCheckpointAtMessageIndex).toBe(7);
  });

  it('ends in ERROR naming MAX_TOOL_CALLS_PER_TURN when a turn asks for more calls, running none; a continue asks again', async () => {
    let width = MAX_TOOL_CALLS_PER_TURN + 1;
    let pings = 0;
    const counted = tool({
      name: 'ping',
      description: 'Answers pong',
      parameters: z.object({}),
      execute: () => `pong ${(pings += 1)}`,
    });
    const wide = new ScriptedModel({
      decide: ({ messages }) =>
        toolResults(messages).length === 0
          ? { toolCalls: Array.from({ length: width }, () => ({ name: 'ping', arguments: {} })) }
          : { text: `got ${toolResults(messages).length}` },
    });
    const engine = engineWith(new Agent({ name: 'pinger', model: wide, tools: [counted] }));
    const failed = await runAgent(engine);
    expect(failed).toMatchObject({
      status: 'ERROR',
      error: {
        name: 'TooManyToolCallsError',
        message: `run ${failed.runId}: the model asked for 1001 tool calls in one turn, more than MAX_TOOL_CALLS_PER_TURN (1000) allows`,
        retryable: false,
      },
    });
    expect(pings).toBe(0);
    expect((await t.store.loadHistory(failed.runId)).messages).toHaveLength(1);

    width = MAX_TOOL_CALLS_PER_TURN;
    expect((await engine.continueRun(failed.runId)).action).toBe('resume');
    const resumed = await engine.execute(failed.runId, { reason: 'continue' });
    expect(resumed.outcome === 'finished' && resumed.run.content).toBe('got 1000');
    expect(pings).toBe(MAX_TOOL_CALLS_PER_TURN);
  });
});

describe('fencing inside an execution', () => {
  it('stops with LeaseLostError and writes nothing once another execution claims the run', async () => {
    const takeover = tool({
      name: 'ping',
      description: 'Another worker claims the run while this call runs',
      parameters: z.object({}),
      execute: async (_args, ctx) => {
        await t.store.claimRun(ctx.runId, { workerId: 'usurper', reason: 'recovered' });
        return 'pong';
      },
    });
    const engine = engineWith(
      new Agent({ name: 'pinger', model: pingThenAnswer, tools: [takeover] }),
    );
    const run = await engine.createRun({
      entity: { kind: 'agent', name: 'pinger' },
      input: 'ping',
      checkpoint: 'tool-batch',
    });
    await expect(engine.execute(run.runId, { reason: 'run' })).rejects.toBeInstanceOf(
      LeaseLostError,
    );
    const view = (await t.store.getRunView(run.runId))!;
    expect(view).toMatchObject({
      status: 'RUNNING',
      epoch: 2,
      last_checkpoint_at_message_index: 0,
    });
    expect(view.messages).toEqual([]);
    expect(view.tools).toEqual([]);
  });
});

describe('tool-call checkpoints', () => {
  it('writes the tool-call turn before running it and each result as it finishes', async () => {
    const seenRows: string[] = [];
    const twoCalls = new ScriptedModel({
      decide: ({ messages }) =>
        toolResults(messages).length === 0
          ? {
              toolCalls: [
                { name: 'look', arguments: {} },
                { name: 'look', arguments: {} },
              ],
            }
          : { text: 'done' },
    });
    const look = tool({
      name: 'look',
      description: 'Reports the stored status of its own row',
      parameters: z.object({}),
      execute: async (_args, ctx) => {
        const { toolCalls } = await t.store.loadHistory(ctx.runId);
        seenRows.push(toolCalls.find((c) => c.toolCallId === ctx.toolCallId)?.status ?? 'missing');
        return 'seen';
      },
    });
    const run = await runAgent(
      engineWith(new Agent({ name: 'pinger', model: twoCalls, tools: [look] })),
      'tool-call',
    );
    expect(run.status).toBe('COMPLETED');
    expect(seenRows).toEqual(['running', 'running']);
    const view = (await t.store.getRunView(run.runId))!;
    expect(view.tools.map((c) => c.status)).toEqual(['completed', 'completed']);
    expect(view.messages.map((m) => (m as { role: string }).role)).toEqual([
      'user',
      'assistant',
      'tool',
      'tool',
      'assistant',
    ]);
  });
});

describe('tool-call resume', () => {
  it('reuses finished calls of an interrupted turn and reruns only the unfinished one, same idempotency key', async () => {
    const executions: string[] = [];
    let takeOver = true;
    const fastAndSlow = new ScriptedModel({
      decide: ({ messages }) =>
        toolResults(messages).length < 2
          ? {
              toolCalls: [
                { name: 'work', arguments: { ms: 0 } },
                { name: 'work', arguments: { ms: 150 } },
              ],
            }
          : {
              text: `results: ${toolResults(messages)
                .map((m) => m.content)
                .join(', ')}`,
            },
    });
    const work = tool({
      name: 'work',
      description: 'Sleeps; the slow call is interrupted by a takeover the first time',
      parameters: z.object({ ms: z.number() }),
      execute: async ({ ms }, ctx) => {
        await new Promise((resolve) => setTimeout(resolve, ms));
        if (ms > 0 && takeOver) {
          takeOver = false;
          await t.store.claimRun(ctx.runId, { workerId: 'crash-simulator', reason: 'recovered' });
          throw new Error('this worker crashed');
        }
        executions.push(ctx.idempotencyKey);
        return `${ms}ms`;
      },
    });
    const engine = engineWith(new Agent({ name: 'pinger', model: fastAndSlow, tools: [work] }));
    const run = await engine.createRun({
      entity: { kind: 'agent', name: 'pinger' },
      input: 'go',
      checkpoint: 'tool-call',
    });
    await expect(engine.execute(run.runId, { reason: 'run' })).rejects.toBeInstanceOf(
      LeaseLostError,
    );
    expect(executions).toEqual([`${run.runId}:call_1_1`]);

    const resumed = await engine.execute(run.runId, { reason: 'recovered' });
    expect(resumed.outcome === 'finished' && resumed.run.content).toBe('results: 0ms, 150ms');
    expect(executions).toEqual([`${run.runId}:call_1_1`, `${run.runId}:call_1_2`]);
    const view = (await t.store.getRunView(run.runId))!;
    expect(view.tools.map((c) => [c.tool_call_id, c.status])).toEqual([
      ['call_1_1', 'completed'],
      ['call_1_2', 'completed'],
    ]);
  });
});

describe('the OpenAI Chat Completions adapter in a run', () => {
  it('runs a tool call turn and a final answer through the real openai client', async () => {
    server = await startFakeOpenAIServer();
    server.enqueue(
      { kind: 'tool_calls', calls: [{ id: 'call_a', name: 'ping', arguments: {} }] },
      { kind: 'error', status: 429, message: 'slow down' },
      { kind: 'text', text: 'the tool said pong' },
    );
    const model = new OpenAIChatModel({
      model: 'local-model',
      apiKey: 'test-key',
      baseURL: server.url,
    });
    const run = await runAgent(engineWith(new Agent({ name: 'pinger', model, tools: [ping] })));
    expect(run).toMatchObject({ status: 'COMPLETED', content: 'the tool said pong' });
    expect(server.requests).toHaveLength(3);
    const lastBody = server.requests[2]!.body as {
      messages: { role: string; content?: string; tool_call_id?: string }[];
    };
    expect(lastBody.messages.at(-1)).toMatchObject({
      role: 'tool',
      tool_call_id: 'call_a',
      content: 'pong',
    });
    expect(run.usage.totalTokens).toBeGreaterThan(0);
  });
});
