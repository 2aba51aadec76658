import {
  Agent,
  Engine,
  OpenAIChatModel,
  Registry,
  tool,
  type RetryPolicy,
  type RunEvent,
} from '@cairn/engine';
import { startFakeOpenAIServer, type FakeOpenAIServer } from '@cairn/engine/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { openTestStore, type TestStore } from '../helpers/test-store.js';

let t: TestStore;
let server: FakeOpenAIServer;
let pings: number;
let events: RunEvent[];

beforeEach(async () => {
  t = await openTestStore();
  server = await startFakeOpenAIServer();
  pings = 0;
  events = [];
});
afterEach(async () => {
  await server.close();
  await t.close();
});

const RETRY: RetryPolicy = { maxAttempts: 5, baseDelayMs: 20, maxDelayMs: 200 };

const ping = tool({
  name: 'ping',
  description: 'Answers pong',
  parameters: z.object({}),
  execute: () => {
    pings += 1;
    return 'pong';
  },
});

/** An engine whose only agent talks to the fake server through the real openai client. */
function engineWith(options: { timeoutMs?: number } = {}): Engine {
  const model = new OpenAIChatModel({
    model: 'fake',
    apiKey: 'test-key',
    baseURL: server.url,
    ...options,
  });
  return new Engine({
    store: t.store,
    registry: new Registry({ agents: [new Agent({ name: 'pinger', model, tools: [ping] })] }),
    workerId: 'faults',
    retry: RETRY,
    onEvent: (event) => void events.push(event),
  });
}

async function runToEnd(engine: Engine) {
  const run = await engine.createRun({
    entity: { kind: 'agent', name: 'pinger' },
    input: 'ping',
    checkpoint: 'tool-batch',
  });
  const result = await engine.execute(run.runId, { reason: 'run' });
  if (result.outcome !== 'finished') throw new Error('expected a finished run');
  return result.run;
}

function retries(): Record<string, unknown>[] {
  return events
    .filter((e) => e.type === 'ModelRequestCompleted' && e.data.retrying && !e.data.rateLimited)
    .map((e) => e.data);
}

/** The provider's 429s the run waited out: capacity, not retries. */
function rateLimits(): Record<string, unknown>[] {
  return events
    .filter((e) => e.type === 'ModelRequestCompleted' && e.data.rateLimited)
    .map((e) => e.data);
}

describe('model faults over the OpenAI wire protocol', () => {
  it('waits out a 429 without using the retry budget and retries 5xx answers with growing backoff, then completes', async () => {
    server.enqueue(
      { kind: 'error', status: 429, message: 'rate limited' },
      { kind: 'error', status: 500, message: 'internal' },
      { kind: 'tool_calls', calls: [{ name: 'ping', arguments: {} }] },
      { kind: 'error', status: 502, message: 'bad gateway' },
      { kind: 'error', status: 503, message: 'overloaded' },
      { kind: 'error', status: 529, message: 'overloaded' },
      { kind: 'text', text: 'pong received' },
    );
    const run = await runToEnd(engineWith());
    expect(run).toMatchObject({ status: 'COMPLETED', content: 'pong received' });
    expect(server.requests).toHaveLength(7);
    expect(pings).toBe(1);
    expect(rateLimits().map((r) => String(r.error).match(/\b429\b/)?.[0])).toEqual(['429']);
    const seen = retries();
    expect(seen.map((r) => r.attempt)).toEqual([1, 1, 2, 3]);
    expect(seen.map((r) => String(r.error).match(/\b(50\d|529)\b/)?.[1])).toEqual([
      '500',
      '502',
      '503',
      '529',
    ]);
    for (const r of seen) {
      const cap = Math.min(RETRY.maxDelayMs, RETRY.baseDelayMs * 2 ** (Number(r.attempt) - 1));
      expect(r.delayMs).toBeGreaterThanOrEqual(cap / 2);
      expect(r.delayMs).toBeLessThanOrEqual(cap);
    }
  });

  it('times out a hung request and retries it', async () => {
    server.enqueue(
      { kind: 'hang' },
      { kind: 'tool_calls', calls: [{ name: 'ping', arguments: {} }] },
      { kind: 'hang' },
      { kind: 'text', text: 'late but fine' },
    );
    const started = Date.now();
    const run = await runToEnd(engineWith({ timeoutMs: 300 }));
    expect(run).toMatchObject({ status: 'COMPLETED', content: 'late but fine' });
    expect(Date.now() - started).toBeGreaterThanOrEqual(600);
    expect(server.requests).toHaveLength(4);
    expect(retries().map((r) => String(r.error))).toEqual([
      expect.stringMatching(/timed out/i),
      expect.stringMatching(/timed out/i),
    ]);
  });

  it('ends a run in ERROR on a malformed response, keeps its checkpoint, and a continue completes it', async () => {
    server.enqueue(
      { kind: 'tool_calls', calls: [{ name: 'ping', arguments: {} }] },
      { kind: 'malformed' },
    );
    const engine = engineWith();
    const failed = await runToEnd(engine);
    expect(failed).toMatchObject({ status: 'ERROR', lastCheckpointAtMessageIndex: 3 });
    expect(failed.error).toMatchObject({
      name: 'ModelError',
      retryable: false,
      message: expect.stringContaining('malformed model response'),
    });
    expect(server.requests).toHaveLength(2);
    expect(events.filter((e) => e.type === 'RunError')).toHaveLength(1);

    server.enqueue({ kind: 'text', text: 'recovered' });
    const resumed = await engine.execute(failed.runId, { reason: 'continue' });
    expect(resumed.outcome === 'finished' && resumed.run).toMatchObject({
      status: 'COMPLETED',
      content: 'recovered',
    });
    const view = (await t.store.getRunView(failed.runId))!;
    expect(view.tools).toHaveLength(1);
    expect(view.attempts.map((a) => a.outcome)).toEqual(['error', 'completed']);
    expect(pings).toBe(1);
  });
});
