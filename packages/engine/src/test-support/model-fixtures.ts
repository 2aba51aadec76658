import OpenAI from 'openai';
import { expect, it } from 'vitest';
import { ModelError } from '../errors.js';
import type { Message } from '../messages.js';
import type { Model, ModelRequest, ModelStreamDelta, ToolSpec } from '../model.js';
import type { StreamFallbackLogger } from '../models/stream-fallback.js';
import { startFakeOpenAIServer, type FakeOpenAIServer } from '../testing/fake-openai-server.js';

/** The tool both adapter tests offer the model. */
export const SEARCH: ToolSpec = {
  name: 'slow_search',
  description: 'Searches the web.',
  parameters: {
    type: 'object',
    properties: { query: { type: 'string' } },
    required: ['query'],
    additionalProperties: false,
  },
};

/** A request with the researcher's instructions and the search tool. */
export function ask(messages: Message[], extra: Partial<ModelRequest> = {}): ModelRequest {
  return { instructions: 'You are a researcher.', messages, tools: [SEARCH], ...extra };
}

/** Awaits a rejection and checks that it is a {@link ModelError}. */
export async function modelError(promise: Promise<unknown>): Promise<ModelError> {
  const error = await promise.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(ModelError);
  return error as ModelError;
}

/** The model that answered, as the fake provider names it: a dated snapshot of the one asked for. */
const SNAPSHOT = /-2026-01-15$/;

/**
 * Both adapters stream the same way: with `onDelta` they send `stream: true`,
 * hand over text and tool-call argument fragments as the server streams them,
 * and resolve with the same complete turn (fresh call ids, usage) as without.
 */
export async function expectStreamedTurns(model: Model, server: FakeOpenAIServer): Promise<void> {
  const text = 'Cairns are piles of stones that mark a trail.';
  server.enqueue({ kind: 'text', text, usage: { input: 11, output: 9 } });
  const deltas: ModelStreamDelta[] = [];
  const answer = await model.respond(
    ask([{ role: 'user', content: 'What is a cairn?' }], { onDelta: (d) => deltas.push(d) }),
  );
  expect(server.requests.at(-1)?.body['stream']).toBe(true);
  expect(deltas.length).toBeGreaterThan(3);
  expect(deltas.every((d) => d.kind === 'text')).toBe(true);
  expect(deltas.map((d) => (d.kind === 'text' ? d.text : '')).join('')).toBe(text);
  expect(answer).toEqual({
    message: { role: 'assistant', content: text },
    usage: { inputTokens: 11, outputTokens: 9, totalTokens: 20 },
    responseModel: expect.stringMatching(SNAPSHOT),
    finishReason: 'stop',
  });

  const calls = [
    { name: 'slow_search', arguments: { query: 'stone cairns in Scotland' } },
    { name: 'slow_search', arguments: { query: 'trail markers' } },
  ];
  server.enqueue({ kind: 'tool_calls', calls });
  const callDeltas: ModelStreamDelta[] = [];
  const turn = await model.respond(
    ask([{ role: 'user', content: 'Research cairns.' }], { onDelta: (d) => callDeltas.push(d) }),
  );
  const toolCalls = turn.message.toolCalls ?? [];
  expect(toolCalls.map((c) => [c.name, JSON.parse(c.arguments)])).toEqual(
    calls.map((c) => [c.name, c.arguments]),
  );
  expect(toolCalls.every((c) => /^call_/.test(c.id))).toBe(true);
  expect(new Set(toolCalls.map((c) => c.id)).size).toBe(2);
  const argsByIndex = new Map<number, string>();
  for (const d of callDeltas) {
    if (d.kind === 'tool-call')
      argsByIndex.set(d.index, (argsByIndex.get(d.index) ?? '') + d.arguments);
  }
  expect([...argsByIndex.values()]).toEqual(toolCalls.map((c) => c.arguments));
  expect(callDeltas.filter((d) => d.kind === 'tool-call').length).toBeGreaterThan(2);
}

/** Builds the adapter under test on the server at `baseURL`, with extra options (`stream`). */
export type ModelFactory = (
  baseURL: string,
  options?: { stream?: boolean; client?: OpenAI; logger?: StreamFallbackLogger },
) => Model;

const TEXT = 'Cairns are piles of stones that mark a trail.';
const CALLS = [{ name: 'slow_search', arguments: { query: 'stone cairns' } }];

/** One text turn and one tool-call turn, asked with `onDelta`: the answers and the deltas seen. */
async function askBoth(model: Model, server: FakeOpenAIServer) {
  server.enqueue(
    { kind: 'text', text: TEXT, usage: { input: 11, output: 9 } },
    { kind: 'tool_calls', calls: CALLS },
  );
  const deltas: ModelStreamDelta[] = [];
  const onDelta = (d: ModelStreamDelta) => void deltas.push(d);
  const text = await model.respond(
    ask([{ role: 'user', content: 'What is a cairn?' }], { onDelta }),
  );
  const turn = await model.respond(
    ask([{ role: 'user', content: 'Research cairns.' }], { onDelta }),
  );
  return { text, turn, deltas };
}

function expectBothAnswers({ text, turn }: Awaited<ReturnType<typeof askBoth>>): void {
  expect(text).toEqual({
    message: { role: 'assistant', content: TEXT },
    usage: { inputTokens: 11, outputTokens: 9, totalTokens: 20 },
    responseModel: expect.stringMatching(SNAPSHOT),
    finishReason: 'stop',
  });
  expect(turn.message.toolCalls?.map((c) => [c.name, JSON.parse(c.arguments)])).toEqual(
    CALLS.map((c) => [c.name, c.arguments]),
  );
}

/**
 * A server that answers `stream: true` with a whole `application/json` body
 * (as servers that do not stream do): the adapter reads that answer, and
 * reports no live deltas for the turn.
 */
async function expectJsonAnswersToStreamRequests(build: ModelFactory): Promise<void> {
  const server = await startFakeOpenAIServer({ streaming: 'never' });
  try {
    const asked = await askBoth(build(server.url), server);
    expect(server.requests.map((r) => r.body['stream'])).toEqual([true, true]);
    expectBothAnswers(asked);
    expect(asked.deltas).toEqual([]);
  } finally {
    await server.close();
  }
}

/** With `stream: false` the adapter never asks to stream, even when the turn takes deltas. */
async function expectStreamOff(build: ModelFactory): Promise<void> {
  const server = await startFakeOpenAIServer();
  try {
    const asked = await askBoth(build(server.url, { stream: false }), server);
    expect(server.requests.map((r) => 'stream' in r.body)).toEqual([false, false]);
    expectBothAnswers(asked);
    expect(asked.deltas).toEqual([]);
  } finally {
    await server.close();
  }
}

/** A logger that keeps the adapter's warnings. */
function warnings(): { logger: StreamFallbackLogger; said: string[] } {
  const said: string[] = [];
  return { logger: { warn: (_obj, msg) => void said.push(msg ?? '') }, said };
}

/**
 * A server whose stream breaks on tool-call turns, as a published mock
 * server's does: a text-only stream (`@dwmkerr/mock-llm`) sends the turn
 * empty, another answers 500 `TypeError`. Text turns stream; the broken turn
 * is asked again without streaming, which answers it, and from then on the
 * adapter asks without streaming, saying so once, naming CAIRN_MODEL_STREAM.
 */
async function expectBrokenStreamsFallBack(
  build: ModelFactory,
  streaming: 'text-only' | 'fails-tool-calls',
): Promise<void> {
  const server = await startFakeOpenAIServer({ streaming });
  try {
    const { logger, said } = warnings();
    const model = build(server.url, { logger });
    // Each request takes the next reply: each of the broken turn's requests takes one.
    server.enqueue(
      { kind: 'text', text: TEXT },
      ...(streaming === 'fails-tool-calls' ? [{ kind: 'tool_calls', calls: CALLS } as const] : []),
      { kind: 'tool_calls', calls: CALLS },
      { kind: 'tool_calls', calls: CALLS },
      { kind: 'tool_calls', calls: CALLS },
      { kind: 'text', text: TEXT },
    );
    const deltas: ModelStreamDelta[] = [];
    const onDelta = (d: ModelStreamDelta) => void deltas.push(d);
    const text = await model.respond(
      ask([{ role: 'user', content: 'What is a cairn?' }], { onDelta }),
    );
    expect(text.message).toEqual({ role: 'assistant', content: TEXT });
    expect(deltas.map((d) => (d.kind === 'text' ? d.text : '')).join('')).toBe(TEXT);
    expect(said).toEqual([]);

    const research = ask([{ role: 'user', content: 'Research cairns.' }], { onDelta });
    if (streaming === 'fails-tool-calls') {
      // A first 500 may be a server's one-off: it goes to the runner, which asks again.
      const first = await modelError(model.respond(research));
      expect(first.status).toBe(500);
      expect(first.retryable).toBe(true);
      expect(said).toEqual([]);
    }
    for (let turn = 0; turn < 2; turn++) {
      const answer = await model.respond(research);
      expect(answer.message.toolCalls?.map((c) => c.name)).toEqual(['slow_search']);
    }
    const last = await model.respond(
      ask([{ role: 'user', content: 'What is a cairn?' }], { onDelta }),
    );
    expect(last.message.content).toBe(TEXT);

    // Streamed text; the broken turn streamed (twice for a 500), then whole; every later turn whole.
    expect(server.requests.map((r) => r.body['stream'])).toEqual([
      true,
      ...(streaming === 'fails-tool-calls' ? [true] : []),
      true,
      undefined,
      undefined,
      undefined,
    ]);
    expect(said).toHaveLength(1);
    expect(said[0]).toContain('asking without streaming from now on');
    expect(said[0]).toContain('CAIRN_MODEL_STREAM=false');
  } finally {
    await server.close();
  }
}

/**
 * A streamed 500 goes to the runner as it is; a second one in a row is asked
 * again whole, and when that fails too the error keeps its status and
 * retryability for the runner and names CAIRN_MODEL_STREAM; streaming stays
 * on. A 503 (overload, a gateway) is never asked again here.
 */
async function expectFailuresNotCuredWholeReachTheRunner(build: ModelFactory): Promise<void> {
  const server = await startFakeOpenAIServer();
  try {
    const { logger, said } = warnings();
    const model = build(server.url, { logger });
    const hi = ask([{ role: 'user', content: 'Hi' }], { onDelta: () => undefined });
    server.enqueue(
      { kind: 'error', status: 500, message: 'TypeError' },
      { kind: 'error', status: 500, message: 'TypeError' },
      { kind: 'error', status: 500, message: 'The server had an error' },
      { kind: 'error', status: 503, message: 'Model is loading' },
      { kind: 'text', text: TEXT },
    );

    const once = await modelError(model.respond(hi));
    expect(once.status).toBe(500);
    expect(once.retryable).toBe(true);
    expect(once.message).not.toContain('CAIRN_MODEL_STREAM');

    const both = await modelError(model.respond(hi));
    expect(both.status).toBe(500);
    expect(both.retryable).toBe(true);
    expect(both.message).toContain('The server had an error');
    expect(both.message).toContain('TypeError');
    expect(both.message).toContain('CAIRN_MODEL_STREAM=false');

    const loading = await modelError(model.respond(hi));
    expect(loading.status).toBe(503);
    expect(loading.retryable).toBe(true);
    expect(loading.message).not.toContain('CAIRN_MODEL_STREAM');

    await model.respond(hi);
    expect(server.requests.map((r) => r.body['stream'])).toEqual([
      true,
      true,
      undefined,
      true,
      true,
    ]);
    expect(said).toEqual([]);
  } finally {
    await server.close();
  }
}

/**
 * An event stream under another content type (a proxy relabelled it) is
 * still read as one: text, usage and tool calls come back, and its deltas
 * arrive once the whole body is in.
 */
async function expectMislabelledStreamsRead(build: ModelFactory): Promise<void> {
  const server = await startFakeOpenAIServer({ streaming: 'mislabelled' });
  try {
    const asked = await askBoth(build(server.url), server);
    expectBothAnswers(asked);
    expect(asked.deltas.map((d) => (d.kind === 'text' ? d.text : '')).join('')).toBe(TEXT);
  } finally {
    await server.close();
  }
}

/**
 * A body that is neither JSON nor an event stream fails naming the status,
 * content type and first bytes (never the whole page): retryable from a 5xx
 * (a gateway's error page passes), not from a 2xx (the same URL answers the
 * same page again; the message points at the base URL), streaming or not.
 */
async function expectUnreadableBodiesNamed(build: ModelFactory): Promise<void> {
  const server = await startFakeOpenAIServer();
  const page = `<!DOCTYPE html><html><head><title>Welcome</title></head><body>${'x'.repeat(5_000)}</body></html>`;
  try {
    for (const stream of [true, false]) {
      const model = build(server.url, { stream });
      server.enqueue({
        kind: 'raw',
        status: 200,
        contentType: 'text/html; charset=utf-8',
        body: page,
      });
      const ok = await modelError(
        model.respond(ask([{ role: 'user', content: 'Hi' }], { onDelta: () => undefined })),
      );
      expect(ok.retryable).toBe(false);
      expect(ok.status).toBe(200);
      expect(ok.message).toContain('200');
      expect(ok.message).toContain('text/html');
      expect(ok.message).toContain('<!DOCTYPE html><html><head><title>Welcome</title>');
      expect(ok.message).toContain('base URL');
      expect(ok.message.length).toBeLessThan(600);

      server.enqueue({
        kind: 'raw',
        status: 502,
        contentType: 'text/html',
        body: `<html><body><h1>502 Bad Gateway</h1>${'y'.repeat(5_000)}</body></html>`,
      });
      const gateway = await modelError(
        model.respond(ask([{ role: 'user', content: 'Hi' }], { onDelta: () => undefined })),
      );
      expect(gateway.retryable).toBe(true);
      expect(gateway.status).toBe(502);
      expect(gateway.message).toContain('text/html');
      expect(gateway.message).toContain('<h1>502 Bad Gateway</h1>');
      expect(gateway.message.length).toBeLessThan(600);

      server.enqueue({
        kind: 'raw',
        status: 200,
        contentType: 'application/json',
        body: '{"id":"chatcmpl-1","choi',
      });
      const cut = await modelError(
        model.respond(ask([{ role: 'user', content: 'Hi' }], { onDelta: () => undefined })),
      );
      expect(cut.retryable).toBe(false);
      expect(cut.message).toContain('application/json');
      expect(cut.message).toContain('{"id":"chatcmpl-1","choi');
    }
  } finally {
    await server.close();
  }
}

/**
 * A 429 from a provider-like quota reaches Cairn as a ModelError with the
 * parsed rate-limit headers, streamed or not, after exactly one request,
 * even through an injected client that would retry it itself.
 */
async function expectRateLimitHeaders(build: ModelFactory, modelId: string): Promise<void> {
  const server = await startFakeOpenAIServer({
    quota: { perModel: { [modelId]: { requestsPerMinute: 1, tokensPerMinute: 100_000 } } },
  });
  try {
    server.enqueue({ kind: 'text', text: 'First.' });
    const retrying = new OpenAI({ apiKey: 'sk-test', baseURL: server.url, maxRetries: 3 });
    const models = [build(server.url), build(server.url, { client: retrying })];
    await models[0]!.respond(ask([{ role: 'user', content: 'Hi' }]));
    const tokensUsed = server.quota.tokens(modelId);

    for (const limited of models) {
      for (const onDelta of [undefined, () => {}]) {
        const sent = server.requests.length;

        const error = await modelError(
          limited.respond(ask([{ role: 'user', content: 'Hi' }], onDelta ? { onDelta } : {})),
        );

        expect(server.requests.length - sent).toBe(1);
        expect(server.requests.at(-1)?.body['stream']).toBe(onDelta ? true : undefined);
        expect(error.status).toBe(429);
        expect(error.retryable).toBe(true);
        const retryAfterMs = error.rateLimit?.retryAfterMs ?? 0;
        expect(retryAfterMs).toBeGreaterThan(0);
        expect(retryAfterMs).toBeLessThanOrEqual(60_000);
        expect(error.rateLimit).toEqual({
          retryAfterMs,
          remainingRequests: 0,
          remainingTokens: 100_000 - tokensUsed,
          resetRequestsMs: retryAfterMs,
          resetTokensMs: 0,
        });
      }
    }
    expect(server.quota.rejected(modelId)).toBe(4);
  } finally {
    await server.close();
  }
}

/**
 * The tests every OpenAI adapter passes against servers as they really are:
 * one that does not stream, streaming turned off, a stream that breaks tool
 * turns (text only, or a 500), a stream under another content type, a body that is neither, and a
 * quota's 429 (`modelId`: the model the factory's adapters ask for).
 */
export function itReadsWhatServersSend(build: ModelFactory, modelId: string): void {
  it("reads a 429's rate-limit headers into the ModelError, streamed or not, after exactly one request even through a client that retries", async () => {
    await expectRateLimitHeaders(build, modelId);
  });
  it('reads a JSON answer to a stream: true request (a server that does not stream), with no deltas', async () => {
    await expectJsonAnswersToStreamRequests(build);
  });
  it('never asks to stream with stream: false', async () => {
    await expectStreamOff(build);
  });
  it.each(['text-only', 'fails-tool-calls'] as const)(
    'asks a tool turn again without streaming when a %s stream breaks it, then stops streaming and says so once',
    async (streaming) => {
      await expectBrokenStreamsFallBack(build, streaming);
    },
  );
  it('leaves a first streamed 500, a 500 that a whole answer does not cure (naming CAIRN_MODEL_STREAM) and a 503 to the runner', async () => {
    await expectFailuresNotCuredWholeReachTheRunner(build);
  });
  it('reads an event stream sent under another content type', async () => {
    await expectMislabelledStreamsRead(build);
  });
  it('names the status, content type and first bytes of a body that is neither JSON nor a stream', async () => {
    await expectUnreadableBodiesNamed(build);
  });
}
