import type OpenAI from 'openai';
import { ResponseStream } from 'openai/lib/responses/ResponseStream';
import { ModelError, assertNever } from '../errors.js';
import type { AssistantMessage, Message, ToolCallRequest } from '../messages.js';
import type { Model, ModelRequest, ModelResponse, ToolSpec } from '../model.js';
import { malformedResponse, toModelError } from './openai-errors.js';
import { readModelReply, type EventStream } from './openai-reply.js';
import {
  createOpenAIClient,
  openAIRequestOptions,
  type OpenAIModelOptions,
} from './openai-options.js';
import { StreamFallback } from './stream-fallback.js';

type ResponseInputItem = OpenAI.Responses.ResponseInputItem;
type Response = OpenAI.Responses.Response;

/** Error codes of a `failed` response that may succeed on a later attempt. */
const RETRYABLE_FAILURE_CODES: ReadonlySet<string> = new Set([
  'server_error',
  'rate_limit_exceeded',
]);

/**
 * A {@link Model} on the OpenAI Responses API (`POST /v1/responses`, `store: false`).
 *
 * @example
 * const model = new OpenAIResponsesModel({ model: 'gpt-5.4', timeoutMs: 120_000 });
 */
export class OpenAIResponsesModel implements Model {
  readonly name: string;
  private readonly client: OpenAI;
  private readonly streaming: StreamFallback;

  constructor(private readonly options: OpenAIModelOptions) {
    this.name = `openai:${options.model}`;
    this.client = createOpenAIClient(options);
    this.streaming = new StreamFallback(this.name, options.logger);
  }

  async respond(request: ModelRequest): Promise<ModelResponse> {
    const body: OpenAI.Responses.ResponseCreateParamsNonStreaming = {
      model: this.options.model,
      input: request.messages.flatMap(toInputItems),
      store: false,
      ...(request.instructions === '' ? {} : { instructions: request.instructions }),
      ...(request.tools.length === 0 ? {} : { tools: request.tools.map(toFunctionTool) }),
      ...(this.options.temperature === undefined ? {} : { temperature: this.options.temperature }),
    };
    return this.streaming.respond(
      request,
      this.options.stream !== false && request.onDelta !== undefined,
      (stream) => this.ask(body, request, stream),
    );
  }

  /** One request, streamed or whole, its answer read by what came back. */
  private async ask(
    body: OpenAI.Responses.ResponseCreateParamsNonStreaming,
    request: ModelRequest,
    stream: boolean,
  ): Promise<ModelResponse> {
    const onDelta = stream ? request.onDelta : undefined;
    try {
      const reply = await readModelReply(
        this.client.responses.create(
          stream ? { ...body, stream: true } : body,
          openAIRequestOptions(this.options, request.signal),
        ),
      );
      if (reply.kind === 'json') return fromResponse(reply.body as Response);
      const response = fromResponse(await assemble(reply.events, onDelta));
      // An aborted request never resolves, though its stream may have ended cleanly.
      request.signal?.throwIfAborted();
      return response;
    } catch (error) {
      throw toModelError(error, request.signal);
    }
  }
}

/** A streamed response, assembled from its events by the client's stream helper, handing on deltas as they come. */
function assemble(events: EventStream, onDelta: ModelRequest['onDelta']): Promise<Response> {
  const stream = ResponseStream.fromReadableStream(events);
  if (onDelta) {
    stream.on('response.output_text.delta', ({ delta }) => onDelta({ kind: 'text', text: delta }));
    stream.on('response.function_call_arguments.delta', ({ output_index, delta }) =>
      onDelta({ kind: 'tool-call', index: output_index, arguments: delta }),
    );
  }
  return stream.finalResponse();
}

function toInputItems(message: Message): ResponseInputItem[] {
  switch (message.role) {
    case 'user':
      return [{ type: 'message', role: 'user', content: message.content }];
    case 'assistant':
      return [
        ...(message.content
          ? [{ type: 'message', role: 'assistant', content: message.content } as const]
          : []),
        ...(message.toolCalls ?? []).map((call): ResponseInputItem => ({
          type: 'function_call',
          call_id: call.id,
          name: call.name,
          arguments: call.arguments,
        })),
      ];
    case 'tool':
      return [
        { type: 'function_call_output', call_id: message.toolCallId, output: message.content },
      ];
    default:
      return assertNever(message);
  }
}

function toFunctionTool(tool: ToolSpec): OpenAI.Responses.FunctionTool {
  return {
    type: 'function',
    name: tool.name,
    description: tool.description,
    parameters: tool.parameters,
    strict: false,
  };
}

/**
 * The Responses API has no finish reason: an incomplete response says why
 * (`max_output_tokens`, `content_filter`), and a complete one stopped at its
 * answer or at its tool calls, named as Chat Completions names them.
 */
function finishReasonOf(response: Response, calledTools: boolean): string {
  if (response.status === 'incomplete') return response.incomplete_details?.reason ?? 'incomplete';
  return calledTools ? 'tool_calls' : 'stop';
}

function fromResponse(response: Response): ModelResponse {
  if (!Array.isArray(response.output))
    throw malformedResponse('response has no output array', response);
  if (response.status === 'failed') {
    const code = response.error?.code ?? 'unknown';
    throw new ModelError(
      `model response failed (${code}): ${response.error?.message ?? 'no message'}`,
      RETRYABLE_FAILURE_CODES.has(code),
    );
  }
  const texts: string[] = [];
  const toolCalls: ToolCallRequest[] = [];
  for (const item of response.output) {
    if (item.type === 'function_call') {
      toolCalls.push({ id: item.call_id, name: item.name, arguments: item.arguments });
    } else if (item.type === 'message') {
      for (const part of item.content)
        texts.push(part.type === 'output_text' ? part.text : part.refusal);
    }
  }
  const message: AssistantMessage = {
    role: 'assistant',
    content: texts.length === 0 ? null : texts.join(''),
    ...(toolCalls.length === 0 ? {} : { toolCalls }),
  };
  const usage = response.usage;
  return {
    message,
    ...(typeof response.model === 'string' && { responseModel: response.model }),
    finishReason: finishReasonOf(response, toolCalls.length > 0),
    ...(usage
      ? {
          usage: {
            inputTokens: usage.input_tokens,
            outputTokens: usage.output_tokens,
            totalTokens: usage.total_tokens,
            ...(usage.input_tokens_details?.cached_tokens && {
              cachedInputTokens: usage.input_tokens_details.cached_tokens,
            }),
          },
        }
      : {}),
  };
}
