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
import { OpenAIChatModel } from './openai-chat-model.js';

let server: FakeOpenAIServer;
let model: OpenAIChatModel;

beforeEach(async () => {
  server = await startFakeOpenAIServer();
  model = new OpenAIChatModel({
    model: 'qwen-test',
    apiKey: 'local',
    baseURL: server.url,
    temperature: 0,
  });
});

afterEach(async () => {
  await server.close();
});

const build: ModelFactory = (baseURL, extra) =>
  new OpenAIChatModel({ model: 'qwen-test', apiKey: 'local', baseURL, ...extra });

describe('OpenAIChatModel', () => {
  it('streams text and tool-call arguments with stream: true, resolving with the complete turn', async () => {
    await expectStreamedTurns(model, server);
  });

  itReadsWhatServersSend(build, 'qwen-test');

  it('returns a tool-call turn and sends a system message and tools as JSON Schema', async () => {
    server.enqueue({
      kind: 'tool_calls',
      calls: [{ id: 'call_1', name: 'slow_search', arguments: { query: 'durable jobs' } }],
    });

    const { message } = await model.respond(
      ask([{ role: 'user', content: 'Research durable jobs.' }]),
    );

    expect(model.name).toBe('openai-chat:qwen-test');
    expect(message).toEqual({
      role: 'assistant',
      content: null,
      toolCalls: [{ id: 'call_1', name: 'slow_search', arguments: '{"query":"durable jobs"}' }],
    });
    expect(server.requests).toHaveLength(1);
    expect(server.requests[0]?.path).toBe('/v1/chat/completions');
    expect(server.requests[0]?.body).toEqual({
      model: 'qwen-test',
      temperature: 0,
      messages: [
        { role: 'system', content: 'You are a researcher.' },
        { role: 'user', content: 'Research durable jobs.' },
      ],
      tools: [
        {
          type: 'function',
          function: {
            name: 'slow_search',
            description: 'Searches the web.',
            parameters: SEARCH.parameters,
          },
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
      usage: { input: 95, output: 7 },
    });

    const response = await model.respond(ask([{ role: 'user', content: 'Summarize.' }]));

    expect(response).toEqual({
      message: { role: 'assistant', content: 'Durable jobs survive crashes.' },
      usage: { inputTokens: 95, outputTokens: 7, totalTokens: 102 },
      // The fake provider answers, as real ones do, with a dated snapshot of the model asked for.
      responseModel: expect.stringMatching(/-2026-01-15$/),
      finishReason: 'stop',
    });
  });

  it('sends previous tool calls as assistant tool_calls and their results as tool messages', async () => {
    server.enqueue({ kind: 'text', text: 'Done.' });
    const history: Message[] = [
      { role: 'user', content: 'Research.' },
      {
        role: 'assistant',
        content: null,
        toolCalls: [
          { id: 'call_a', name: 'slow_search', arguments: '{"query":"a"}' },
          { id: 'call_b', name: 'slow_search', arguments: '{"query":"b"}' },
        ],
      },
      { role: 'tool', toolCallId: 'call_a', name: 'slow_search', content: 'result a' },
      { role: 'tool', toolCallId: 'call_b', name: 'slow_search', content: 'boom', isError: true },
      { role: 'assistant', content: 'Found a.' },
      { role: 'user', content: 'And b?' },
    ];

    await model.respond(ask(history));

    expect(server.requests[0]?.body['messages']).toEqual([
      { role: 'system', content: 'You are a researcher.' },
      { role: 'user', content: 'Research.' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          {
            id: 'call_a',
            type: 'function',
            function: { name: 'slow_search', arguments: '{"query":"a"}' },
          },
          {
            id: 'call_b',
            type: 'function',
            function: { name: 'slow_search', arguments: '{"query":"b"}' },
          },
        ],
      },
      { role: 'tool', tool_call_id: 'call_a', content: 'result a' },
      { role: 'tool', tool_call_id: 'call_b', content: 'boom' },
      { role: 'assistant', content: 'Found a.' },
      { role: 'user', content: 'And b?' },
    ]);
  });

  it('maps a 429 to a retryable ModelError after exactly one request', async () => {
    server.enqueue({
      kind: 'error',
      status: 429,
      message: 'Rate limit reached for qwen-test',
      code: 'rate_limit_exceeded',
    });

    const error = await modelError(model.respond(ask([{ role: 'user', content: 'Hi' }])));

    expect(error.retryable).toBe(true);
    expect(error.status).toBe(429);
    expect(error.message).toContain('Rate limit reached for qwen-test');
    expect(error.rateLimit).toEqual({});
    expect(server.requests).toHaveLength(1);
  });

  it("fails at once on OpenAI's insufficient_quota 429, which no wait cures, with no rateLimit", async () => {
    server.enqueue({
      kind: 'error',
      status: 429,
      message: 'You exceeded your current quota, please check your plan and billing details.',
      type: 'insufficient_quota',
      code: 'insufficient_quota',
    });

    const error = await modelError(model.respond(ask([{ role: 'user', content: 'Hi' }])));

    expect(error.status).toBe(429);
    expect(error.retryable).toBe(false);
    expect(error.rateLimit).toBeUndefined();
    expect(error.message).toContain('You exceeded your current quota');
    expect(server.requests).toHaveLength(1);
  });

  it('maps a 503 to a retryable ModelError', async () => {
    server.enqueue({ kind: 'error', status: 503, message: 'Model is loading' });

    const error = await modelError(model.respond(ask([{ role: 'user', content: 'Hi' }])));

    expect(error.retryable).toBe(true);
    expect(error.status).toBe(503);
    expect(server.requests).toHaveLength(1);
  });

  it('maps a 404 to a non-retryable ModelError carrying the server message', async () => {
    server.enqueue({
      kind: 'error',
      status: 404,
      message: "model 'qwen-test' not found",
      code: 'model_not_found',
    });

    const error = await modelError(model.respond(ask([{ role: 'user', content: 'Hi' }])));

    expect(error.retryable).toBe(false);
    expect(error.status).toBe(404);
    expect(error.message).toContain("404 model 'qwen-test' not found");
  });

  it('maps a 400 to a non-retryable ModelError carrying the server message', async () => {
    server.enqueue({ kind: 'error', status: 400, message: "Invalid 'messages[2].tool_call_id'" });

    const error = await modelError(model.respond(ask([{ role: 'user', content: 'Hi' }])));

    expect(error.retryable).toBe(false);
    expect(error.status).toBe(400);
    expect(error.message).toContain("Invalid 'messages[2].tool_call_id'");
  });

  it('maps a malformed completion to a non-retryable ModelError', async () => {
    server.enqueue({ kind: 'malformed' });

    const error = await modelError(model.respond(ask([{ role: 'user', content: 'Hi' }])));

    expect(error.retryable).toBe(false);
    expect(error.message).toMatch(/malformed/);
  });

  it('fails a hung request after timeoutMs with a retryable timeout error', async () => {
    const timed = new OpenAIChatModel({
      model: 'qwen-test',
      apiKey: 'local',
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

  it('maps a refused connection to a retryable ModelError', async () => {
    const closed = server;
    server = await startFakeOpenAIServer();
    await closed.close();
    const unreachable = new OpenAIChatModel({
      model: 'qwen-test',
      apiKey: 'local',
      baseURL: closed.url,
    });

    const error = await modelError(unreachable.respond(ask([{ role: 'user', content: 'Hi' }])));

    expect(error.retryable).toBe(true);
    expect(error.status).toBeUndefined();
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
});
