import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  FakeQuotaKeeper,
  type FakeModelQuota,
  type FakeQuota,
  type FakeQuotaLedger,
} from './fake-openai-quota.js';
import type { FakeOpenAIReply, FakeToolCall, FakeUsage } from './fake-openai-reply.js';
import { contextOfRequest, replyOfScript } from './fake-openai-script.js';
import type { ScriptContext, ScriptedReply } from './scripted-model.js';

/**
 * How the fake server answers `stream: true`:
 * - `sse`: server-sent events, as the OpenAI API streams;
 * - `never`: the whole answer as `application/json`, as servers that do not stream answer;
 * - `text-only`: a stream built from the answer's text alone, as `@dwmkerr/mock-llm` streams
 *   Chat Completions (`message.content` in chunks, `finish_reason: "stop"`, no usage):
 *   a tool-call answer streams as an empty one;
 * - `mislabelled`: server-sent events under `Content-Type: text/plain`, as some proxies relabel a stream;
 * - `fails-tool-calls`: a tool-call answer asked with `stream: true` is a 500 `{"error":"TypeError"}`,
 *   as a published mock server's broken stream answers; text streams, and whole answers are whole.
 */
export type FakeStreaming = 'sse' | 'never' | 'text-only' | 'mislabelled' | 'fails-tool-calls';

/** Options of {@link startFakeOpenAIServer}. */
export interface FakeOpenAIServerOptions {
  /** @defaultValue 'sse' */
  streaming?: FakeStreaming;
  /**
   * Decides the reply when none is queued, from the request's messages as a
   * {@link ScriptedModel}'s `decide` does, so a whole flow (and its resume in
   * another process) runs without queueing each turn.
   */
  decide?: (context: ScriptContext) => ScriptedReply;
  /**
   * Per-model limits enforced as a provider does: a request past them gets a
   * 429 with `retry-after` and `x-ratelimit-*` headers and is not answered.
   * `decide` is asked before the quota, so it may be asked again for a
   * request the quota refused.
   */
  quota?: FakeQuota;
  /**
   * How long each answer waits before it is sent (a streamed one before its
   * first event), as a model takes time; 429s are sent at once.
   * @defaultValue 0
   */
  latencyMs?: number;
  /**
   * Awaited for each request the quota admitted, before its latency and
   * answer: a test holds a request in flight (its permit taken at the
   * provider) until the moment it needs, e.g. to kill the worker that sent it.
   */
  beforeAnswer?: (request: { model: string; context: ScriptContext }) => Promise<void> | void;
}

/** A request the fake server received. */
export interface FakeOpenAIRequest {
  path: string;
  body: Record<string, unknown>;
}

/** A local server speaking the OpenAI wire protocol (Responses and Chat Completions), driven by scripted replies. */
export interface FakeOpenAIServer {
  /** Base URL for the openai client, e.g. `http://127.0.0.1:43121/v1`. */
  readonly url: string;
  /** Every model request received, in order (those the quota refused too). */
  readonly requests: FakeOpenAIRequest[];
  /** What the quota accepted and refused, per model. */
  readonly quota: FakeQuotaLedger;
  /** Changes a model's quota from now on (undefined: unlimited), e.g. halves it for a quota storm. */
  setQuota(model: string, limits: FakeModelQuota | undefined): void;
  /** Queues the reply to the next model request; with none queued the server answers 500. */
  enqueue(...replies: FakeOpenAIReply[]): void;
  /** Stops the server, dropping hung requests. */
  close(): Promise<void>;
}

type Endpoint = (reply: TextOrToolCalls, body: Record<string, unknown>) => Record<string, unknown>;
/** The server-sent events of a streamed reply (`stream: true`), built from the complete reply. */
type StreamEndpoint = (complete: Record<string, unknown>, reply: TextOrToolCalls) => SseEvent[];
type TextOrToolCalls = Extract<FakeOpenAIReply, { kind: 'text' | 'tool_calls' }>;
interface SseEvent {
  event?: string;
  data: unknown;
}

const ENDPOINTS: Record<
  string,
  {
    endpoint: Endpoint;
    stream: StreamEndpoint;
    textOnlyStream: (complete: Record<string, unknown>) => SseEvent[];
    malformed: () => Record<string, unknown>;
  }
> = {
  '/v1/responses': {
    endpoint: responsesReply,
    stream: responsesStream,
    textOnlyStream: responsesTextOnlyStream,
    malformed: () => ({ id: id('resp_', 24), object: 'response', status: 'completed' }),
  },
  '/v1/chat/completions': {
    endpoint: chatReply,
    stream: chatStream,
    textOnlyStream: chatTextOnlyStream,
    malformed: () => ({ id: id('chatcmpl-', 15), object: 'chat.completion' }),
  },
};

/** Starts a fake OpenAI server on 127.0.0.1 on a free port. */
export async function startFakeOpenAIServer(
  options: FakeOpenAIServerOptions = {},
): Promise<FakeOpenAIServer> {
  const streaming = options.streaming ?? 'sse';
  const queue: FakeOpenAIReply[] = [];
  const requests: FakeOpenAIRequest[] = [];
  const quota = new FakeQuotaKeeper(options.quota, options.latencyMs);

  const server = createServer((req, res) => {
    void handle(req, res).catch((error: unknown) => {
      sendJson(res, 500, errorBody(`fake server failure: ${String(error)}`, 'server_error', null));
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    const route = ENDPOINTS[path];
    if (req.method !== 'POST' || !route) {
      sendJson(
        res,
        404,
        errorBody(`Invalid URL (${req.method} ${path})`, 'invalid_request_error', null),
      );
      return;
    }
    const body = JSON.parse(await readBody(req)) as Record<string, unknown>;
    requests.push({ path, body });
    const queued = queue[0];
    const context = contextOfRequest(path, body);
    const reply = queued ?? (options.decide && replyOfScript(options.decide(context)));
    const model = typeof body['model'] === 'string' ? body['model'] : '';
    const admission = quota.admit(model, reply ? tokensOfReply(reply, body) : 0);
    if (!admission.admitted) {
      sendJson(res, admission.status, admission.body, admission.headers);
      return;
    }
    res.once('close', admission.release);
    if (res.destroyed) admission.release(); // the client went while its body was read
    if (queued) queue.shift();
    await options.beforeAnswer?.({ model, context });
    await latency(options.latencyMs ?? 0, res);
    if (res.destroyed) return;
    if (!reply) {
      sendJson(res, 500, errorBody('fake server: no scripted reply left', 'server_error', null));
      return;
    }
    switch (reply.kind) {
      case 'hang':
        return;
      case 'malformed':
        sendJson(res, 200, route.malformed());
        return;
      case 'raw':
        res.writeHead(reply.status, {
          'content-type': reply.contentType,
          'x-request-id': id('req_', 16),
        });
        res.end(reply.body);
        return;
      case 'error':
        sendJson(
          res,
          reply.status,
          errorBody(reply.message, reply.type ?? errorType(reply.status), reply.code ?? null),
        );
        return;
      default: {
        const complete = route.endpoint(reply, body);
        if (body['stream'] !== true || streaming === 'never') sendJson(res, 200, complete);
        else if (streaming === 'fails-tool-calls' && reply.kind === 'tool_calls')
          sendJson(res, 500, { error: 'TypeError' });
        else if (streaming === 'text-only') sendSse(res, route.textOnlyStream(complete));
        else
          sendSse(
            res,
            route.stream(complete, reply),
            streaming === 'mislabelled' ? 'text/plain; charset=utf-8' : undefined,
          );
      }
    }
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    quota: quota.ledger,
    setQuota: (model, limits) => quota.setQuota(model, limits),
    enqueue: (...replies) => void queue.push(...replies),
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      }),
  };
}

function responsesReply(
  reply: TextOrToolCalls,
  body: Record<string, unknown>,
): Record<string, unknown> {
  const output =
    reply.kind === 'text'
      ? [
          {
            id: id('msg_', 24),
            type: 'message',
            status: 'completed',
            role: 'assistant',
            content: [{ type: 'output_text', text: reply.text, annotations: [], logprobs: [] }],
          },
        ]
      : reply.calls.map((call) => ({
          id: id('fc_', 24),
          type: 'function_call',
          status: 'completed',
          call_id: call.id ?? id('call_', 12),
          name: call.name,
          arguments: argumentsText(call),
        }));
  const usage = usageOf(reply, body);
  return {
    id: id('resp_', 24),
    object: 'response',
    created_at: Math.floor(Date.now() / 1000),
    status: 'completed',
    background: false,
    error: null,
    incomplete_details: null,
    instructions: body['instructions'] ?? null,
    max_output_tokens: null,
    model: snapshotOf(body['model']),
    output,
    parallel_tool_calls: true,
    previous_response_id: null,
    reasoning: { effort: null, summary: null },
    store: body['store'] ?? true,
    temperature: body['temperature'] ?? 1,
    text: { format: { type: 'text' } },
    tool_choice: 'auto',
    tools: body['tools'] ?? [],
    top_p: 1,
    truncation: 'disabled',
    usage: {
      input_tokens: usage.input,
      input_tokens_details: { cached_tokens: usage.cached ?? 0 },
      output_tokens: usage.output,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: usage.input + usage.output,
    },
    user: null,
    metadata: {},
  };
}

/** The model that answers, as a provider names it: a dated snapshot of the one asked for (`gpt-b` is `gpt-b-2026-01-15`). */
function snapshotOf(model: unknown): unknown {
  return typeof model === 'string' ? `${model}-2026-01-15` : model;
}

function chatReply(reply: TextOrToolCalls, body: Record<string, unknown>): Record<string, unknown> {
  const message =
    reply.kind === 'text'
      ? { role: 'assistant', content: reply.text, refusal: null, annotations: [] }
      : {
          role: 'assistant',
          content: null,
          refusal: null,
          annotations: [],
          tool_calls: reply.calls.map((call) => ({
            id: call.id ?? id('call_', 12),
            type: 'function',
            function: { name: call.name, arguments: argumentsText(call) },
          })),
        };
  const usage = usageOf(reply, body);
  return {
    id: id('chatcmpl-', 15),
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: snapshotOf(body['model']),
    choices: [
      {
        index: 0,
        message,
        logprobs: null,
        finish_reason: reply.kind === 'text' ? 'stop' : 'tool_calls',
      },
    ],
    usage: {
      prompt_tokens: usage.input,
      completion_tokens: usage.output,
      total_tokens: usage.input + usage.output,
      prompt_tokens_details: { cached_tokens: usage.cached ?? 0, audio_tokens: 0 },
      completion_tokens_details: {
        reasoning_tokens: 0,
        audio_tokens: 0,
        accepted_prediction_tokens: 0,
        rejected_prediction_tokens: 0,
      },
    },
    service_tier: 'default',
    system_fingerprint: 'fp_fake',
  };
}

/** Text cut the way a model streams it: a few characters at a time. */
function pieces(text: string, size = 4): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

/** The Responses API's stream: created, then per output item added / deltas / done, then completed. */
function responsesStream(complete: Record<string, unknown>): SseEvent[] {
  const events: SseEvent[] = [];
  const push = (type: string, fields: Record<string, unknown>) =>
    events.push({ event: type, data: { type, sequence_number: events.length, ...fields } });
  push('response.created', {
    response: { ...complete, status: 'in_progress', output: [], usage: null },
  });
  push('response.in_progress', {
    response: { ...complete, status: 'in_progress', output: [], usage: null },
  });
  const output = complete['output'] as Record<string, unknown>[];
  output.forEach((item, output_index) => {
    if (item['type'] === 'message') {
      const text = (item['content'] as { text: string }[])[0]!.text;
      push('response.output_item.added', {
        output_index,
        item: { ...item, status: 'in_progress', content: [] },
      });
      const part = { type: 'output_text', text: '', annotations: [], logprobs: [] };
      push('response.content_part.added', {
        item_id: item['id'],
        output_index,
        content_index: 0,
        part,
      });
      for (const delta of pieces(text)) {
        push('response.output_text.delta', {
          item_id: item['id'],
          output_index,
          content_index: 0,
          delta,
          logprobs: [],
        });
      }
      push('response.output_text.done', {
        item_id: item['id'],
        output_index,
        content_index: 0,
        text,
        logprobs: [],
      });
      push('response.content_part.done', {
        item_id: item['id'],
        output_index,
        content_index: 0,
        part: { ...part, text },
      });
    } else {
      const args = item['arguments'] as string;
      push('response.output_item.added', {
        output_index,
        item: { ...item, status: 'in_progress', arguments: '' },
      });
      for (const delta of pieces(args, 7)) {
        push('response.function_call_arguments.delta', {
          item_id: item['id'],
          output_index,
          delta,
        });
      }
      push('response.function_call_arguments.done', {
        item_id: item['id'],
        output_index,
        arguments: args,
      });
    }
    push('response.output_item.done', { output_index, item });
  });
  push('response.completed', { response: complete });
  return events;
}

/** Chat Completions' stream: chunks with `delta`s (content, or tool calls by index), a finish chunk, a usage chunk, `[DONE]`. */
function chatStream(complete: Record<string, unknown>, reply: TextOrToolCalls): SseEvent[] {
  const base = {
    id: complete['id'],
    object: 'chat.completion.chunk',
    created: complete['created'],
    model: complete['model'],
    system_fingerprint: 'fp_fake',
  };
  const chunk = (delta: Record<string, unknown>, finish_reason: string | null = null) => ({
    data: { ...base, choices: [{ index: 0, delta, logprobs: null, finish_reason }] },
  });
  const events: SseEvent[] = [chunk({ role: 'assistant', content: '', refusal: null })];
  const choice = (
    complete['choices'] as { message: Record<string, unknown>; finish_reason: string }[]
  )[0]!;
  if (reply.kind === 'text') {
    for (const content of pieces(reply.text)) events.push(chunk({ content }));
  } else {
    const calls = choice.message['tool_calls'] as {
      id: string;
      function: { name: string; arguments: string };
    }[];
    calls.forEach((call, index) => {
      events.push(
        chunk({
          tool_calls: [
            {
              index,
              id: call.id,
              type: 'function',
              function: { name: call.function.name, arguments: '' },
            },
          ],
        }),
      );
      for (const args of pieces(call.function.arguments, 7)) {
        events.push(chunk({ tool_calls: [{ index, function: { arguments: args } }] }));
      }
    });
  }
  events.push(chunk({}, choice.finish_reason));
  events.push({ data: { ...base, choices: [], usage: complete['usage'] } });
  events.push({ data: '[DONE]' });
  return events;
}

/** The Responses stream of the answer's messages alone: function calls dropped, as a text-only stream drops them. */
function responsesTextOnlyStream(complete: Record<string, unknown>): SseEvent[] {
  const output = (complete['output'] as Record<string, unknown>[]).filter(
    (item) => item['type'] === 'message',
  );
  return responsesStream({ ...complete, output });
}

/** `@dwmkerr/mock-llm`'s Chat Completions stream: `message.content` in pieces, role first, `stop` last, no usage chunk. */
function chatTextOnlyStream(complete: Record<string, unknown>): SseEvent[] {
  const choice = (complete['choices'] as { message: { content: string | null } }[])[0]!;
  const texts = pieces(choice.message.content ?? '');
  const chunks = texts.length === 0 ? [''] : texts;
  const events: SseEvent[] = chunks.map((content, index) => ({
    data: {
      id: complete['id'],
      object: 'chat.completion.chunk',
      created: complete['created'],
      model: complete['model'],
      choices: [
        {
          index: 0,
          delta: { ...(index === 0 ? { role: 'assistant' } : {}), ...(content ? { content } : {}) },
          finish_reason: index === chunks.length - 1 ? 'stop' : null,
        },
      ],
    },
  }));
  events.push({ data: '[DONE]' });
  return events;
}

function argumentsText(call: FakeToolCall): string {
  return typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments);
}

function usageOf(reply: TextOrToolCalls, body: Record<string, unknown>): FakeUsage {
  const produced = reply.kind === 'text' ? reply.text : JSON.stringify(reply.calls);
  return reply.usage ?? { input: tokens(JSON.stringify(body)), output: tokens(produced) };
}

/** The tokens a reply counts against a quota: its usage total; an answer without usage counts none. */
function tokensOfReply(reply: FakeOpenAIReply, body: Record<string, unknown>): number {
  if (reply.kind !== 'text' && reply.kind !== 'tool_calls') return 0;
  const usage = usageOf(reply, body);
  return usage.input + usage.output;
}

/** Waits `ms` before an answer is sent, or less if the client goes first. */
function latency(ms: number, res: ServerResponse): Promise<void> {
  if (ms <= 0) return Promise.resolve();
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      res.off('close', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    res.once('close', done);
  });
}

function tokens(text: string): number {
  return Math.max(1, Math.ceil(text.length / 4));
}

function errorType(status: number): string {
  if (status === 429) return 'requests';
  return status >= 500 ? 'server_error' : 'invalid_request_error';
}

function errorBody(message: string, type: string, code: string | null): Record<string, unknown> {
  return { error: { message, type, param: null, code } };
}

function id(prefix: string, bytes: number): string {
  return prefix + randomBytes(bytes).toString('hex');
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function sendSse(
  res: ServerResponse,
  events: readonly SseEvent[],
  contentType = 'text/event-stream',
): void {
  res.writeHead(200, { 'content-type': contentType, 'x-request-id': id('req_', 16) });
  for (const { event, data } of events) {
    const text = typeof data === 'string' ? data : JSON.stringify(data);
    res.write(`${event ? `event: ${event}\n` : ''}data: ${text}\n\n`);
  }
  res.end();
}

function sendJson(
  res: ServerResponse,
  status: number,
  body: Record<string, unknown>,
  headers: Record<string, string> = {},
): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    ...headers,
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
    'x-request-id': id('req_', 16),
  });
  res.end(text);
}
