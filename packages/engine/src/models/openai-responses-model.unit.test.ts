import OpenAI from 'openai';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ModelError } from '../errors.js';
import type { Message } from '../messages.js';
import {
  ask,
  itReadsWhatServersSend,
  expectStreamedTurns,
  modelError,
  SEARCH,
  type ModelFactory,
} from '../test-support/model-fixtures.js';
import { startFakeOpenAIServer, type FakeOpenAIServer } from '../testing/fake-openai-server.js';
import { OpenAIResponsesModel } from './openai-responses-model.js';

let server: FakeOpenAIServer;
let model: OpenAIResponsesModel;

beforeEach(async () => {
  server = await startFakeOpenAIServer();
  model = new OpenAIResponsesModel({ model: 'gpt-test', apiKey: 'sk-test', baseURL: server.url });
});

afterEach(async () => {
  await server.close();
});

const build: ModelFactory = (baseURL, extra) =>
  new OpenAIResponsesModel({ model: 'gpt-test', apiKey: 'sk-test', baseURL, ...extra });

describe('OpenAIResponsesModel', () => {
  it('streams text and tool-call arguments with stream: true, resolving with the complete turn', async () => {
    await expectStreamedTurns(model, server);
  });

  itReadsWhatServersSend(build, 'gpt-test');

  it('returns a tool-call turn and sends instructions, tools as JSON Schema and store: false', async () => {
    server.enqueue({
      kind: 'tool_calls',
      calls: [{ id: 'call_1', name: 'slow_search', arguments: { query: 'durable jobs' } }],
    });

    const { message } = await model.respond(
      ask([{ role: 'user', content: 'Research durable jobs.' }]),
    );

    expect(model.name).toBe('openai:gpt-test');
    expect(message).toEqual({
      role: 'assistant',
      content: null,
      toolCalls: [{ id: 'call_1', name: 'slow_search', arguments: '{"query":"durable jobs"}' }],
    });
    expect(server.requests).toHaveLength(1);
    expect(server.requests[0]?.path).toBe('/v1/responses');
    expect(server.requests[0]?.body).toEqual({
      model: 'gpt-test',
      instructions: 'You are a researcher.',
      store: false,
      input: [{ type: 'message', role: 'user', content: 'Research durable jobs.' }],
      tools: [
        {
          type: 'function',
          name: 'slow_search',
          description: 'Searches the web.',
          parameters: SEARCH.parameters,
          strict: false,
        },
      ],
    });
  });

  it('returns parallel tool calls of one turn in order', async () => {
    server.enqueue({
      kind: 'tool_calls',
      calls: [
        { id: 'call_a', name: 'slow_search', arguments: { query: 'a' } },
        { id: 'call_b', name: 'slow_search', arguments: '{"query":"b"}' },
      ],
    });

    const { message } = await model.respond(ask([{ role: 'user', content: 'Two searches.' }]));

    expect(message.toolCalls).toEqual([
      { id: 'call_a', name: 'slow_search', arguments: '{"query":"a"}' },
      { id: 'call_b', name: 'slow_search', arguments: '{"query":"b"}' },
    ]);
  });

  it('returns a final answer with its usage, the model that answered and why it stopped', async () => {
    server.enqueue({
      kind: 'text',
      text: 'Durable jobs survive crashes.',
      usage: { input: 120, output: 8 },
    });

    const response = await model.respond(ask([{ role: 'user', content: 'Summarize.' }]));

    expect(response).toEqual({
      message: { role: 'assistant', content: 'Durable jobs survive crashes.' },
      usage: { inputTokens: 120, outputTokens: 8, totalTokens: 128 },
      // The fake provider answers, as real ones do, with a dated snapshot of the model asked for.
      responseModel: expect.stringMatching(/-2026-01-15$/),
      finishReason: 'stop',
    });
  });

  it('sends previous tool calls and their results as function_call and function_call_output items', async () => {
    server.enqueue({ kind: 'text', text: 'Done.' });
    const history: Message[] = [
      { role: 'user', content: 'Research.' },
      {
        role: 'assistant',
        content: 'Searching twice.',
        toolCalls: [
          { id: 'call_a', name: 'slow_search', arguments: '{"query":"a"}' },
          { id: 'call_b', name: 'slow_search', arguments: '{"query":"b"}' },
        ],
      },
      { role: 'tool', toolCallId: 'call_a', name: 'slow_search', content: 'result a' },
      { role: 'tool', toolCallId: 'call_b', name: 'slow_search', content: 'boom', isError: true },
    ];

    await model.respond(ask(history));

    expect(server.requests[0]?.body['input']).toEqual([
      { type: 'message', role: 'user', content: 'Research.' },
      { type: 'message', role: 'assistant', content: 'Searching twice.' },
      { type: 'function_call', call_id: 'call_a', name: 'slow_search', arguments: '{"query":"a"}' },
      { type: 'function_call', call_id: 'call_b', name: 'slow_search', arguments: '{"query":"b"}' },
      { type: 'function_call_output', call_id: 'call_a', output: 'result a' },
      { type: 'function_call_output', call_id: 'call_b', output: 'boom' },
    ]);
  });

  it('maps a 429 to a retryable ModelError after exactly one request', async () => {
    server.enqueue({
      kind: 'error',
      status: 429,
      message: 'Rate limit reached for gpt-test',
      code: 'rate_limit_exceeded',
    });

    const error = await modelError(model.respond(ask([{ role: 'user', content: 'Hi' }])));

    expect(error.retryable).toBe(true);
    expect(error.status).toBe(429);
    expect(error.message).toContain('Rate limit reached for gpt-test');
    expect(error.rateLimit).toEqual({});
    expect(server.requests).toHaveLength(1);
  });

  it('maps a 500 to a retryable ModelError', async () => {
    server.enqueue({ kind: 'error', status: 500, message: 'The server had an error' });

    const error = await modelError(model.respond(ask([{ role: 'user', content: 'Hi' }])));

    expect(error.retryable).toBe(true);
    expect(error.status).toBe(500);
    expect(server.requests).toHaveLength(1);
  });

  it('makes one request per call even with an injected client that retries', async () => {
    const client = new OpenAI({ apiKey: 'sk-test', baseURL: server.url, maxRetries: 3 });
    const injected = new OpenAIResponsesModel({ model: 'gpt-test', client });
    server.enqueue({ kind: 'error', status: 502, message: 'Bad gateway' });

    const error = await modelError(injected.respond(ask([{ role: 'user', content: 'Hi' }])));

    expect(error.retryable).toBe(true);
    expect(server.requests).toHaveLength(1);
  });

  it('maps a 400 to a non-retryable ModelError carrying the server message', async () => {
    server.enqueue({
      kind: 'error',
      status: 400,
      message: "Invalid schema for function 'slow_search'",
    });

    const error = await modelError(model.respond(ask([{ role: 'user', content: 'Hi' }])));

    expect(error.retryable).toBe(false);
    expect(error.status).toBe(400);
    expect(error.message).toContain("400 Invalid schema for function 'slow_search'");
  });

  it('maps a malformed response to a non-retryable ModelError', async () => {
    server.enqueue({ kind: 'malformed' });

    const error = await modelError(model.respond(ask([{ role: 'user', content: 'Hi' }])));

    expect(error.retryable).toBe(false);
    expect(error.message).toMatch(/malformed/);
  });

  it('fails a hung request after timeoutMs with a retryable timeout error', async () => {
    const timed = new OpenAIResponsesModel({
      model: 'gpt-test',
      apiKey: 'sk-test',
      baseURL: server.url,
      timeoutMs: 200,
    });
    server.enqueue({ kind: 'hang' });
    const started = Date.now();

    const error = await modelError(timed.respond(ask([{ role: 'user', content: 'Hi' }])));

    expect(error.retryable).toBe(true);
    expect(error.message).toMatch(/timed out/i);
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(server.requests).toHaveLength(1);
  });

  it('rejects with an abort error soon after its signal is aborted', async () => {
    server.enqueue({ kind: 'hang' });
    const controller = new AbortController();
    const started = Date.now();
    setTimeout(() => controller.abort(), 50);

    const error = await model
      .respond(ask([{ role: 'user', content: 'Hi' }], { signal: controller.signal }))
      .catch((e: unknown) => e);

    expect(error).not.toBeInstanceOf(ModelError);
    expect((error as Error).name).toBe('AbortError');
    expect(Date.now() - started).toBeLessThan(1_000);
  });

  it('rejects at once with the abort reason when the signal is already aborted', async () => {
    const reason = new Error('run cancelled');

    await expect(
      model.respond(ask([{ role: 'user', content: 'Hi' }], { signal: AbortSignal.abort(reason) })),
    ).rejects.toBe(reason);
    expect(server.requests).toHaveLength(0);
  });
});
