import type OpenAI from 'openai';
import { ChatCompletionStream } from 'openai/lib/ChatCompletionStream';
import { assertNever } from '../errors.js';
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

type ChatMessage = OpenAI.Chat.ChatCompletionMessageParam;

/**
 * A {@link Model} on Chat Completions (`POST /v1/chat/completions`), for any
 * OpenAI-compatible server (vLLM, Ollama, LM Studio) through `baseURL`.
 *
 * @example
 * const model = new OpenAIChatModel({ model: 'qwen3:8b', baseURL: 'http://localhost:11434/v1', apiKey: 'ollama' });
 */
export class OpenAIChatModel implements Model {
  readonly name: string;
  private readonly client: OpenAI;
  private readonly streaming: StreamFallback;

  constructor(private readonly options: OpenAIModelOptions) {
    this.name = `openai-chat:${options.model}`;
    this.client = createOpenAIClient(options);
    this.streaming = new StreamFallback(this.name, options.logger);
  }

  async respond(request: ModelRequest): Promise<ModelResponse> {
    const body: OpenAI.Chat.ChatCompletionCreateParamsNonStreaming = {
      model: this.options.model,
      messages: [
        ...(request.instructions === ''
          ? []
          : [{ role: 'system', content: request.instructions } as const]),
        ...request.messages.map(toChatMessage),
      ],
      ...(request.tools.length === 0 ? {} : { tools: request.tools.map(toChatTool) }),
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
    body: OpenAI.Chat.ChatCompletionCreateParamsNonStreaming,
    request: ModelRequest,
    stream: boolean,
  ): Promise<ModelResponse> {
    const onDelta = stream ? request.onDelta : undefined;
    try {
      const reply = await readModelReply(
        this.client.chat.completions.create(
          stream ? { ...body, stream: true, stream_options: { include_usage: true } } : body,
          openAIRequestOptions(this.options, request.signal),
        ),
      );
      if (reply.kind === 'json') return fromCompletion(reply.body as OpenAI.Chat.ChatCompletion);
      const response = fromCompletion(await assemble(reply.events, onDelta));
      // An aborted request never resolves, though its stream may have ended cleanly.
      request.signal?.throwIfAborted();
      return response;
    } catch (error) {
      throw toModelError(error, request.signal);
    }
  }
}

/** A streamed completion, assembled from its chunks by the client's stream helper, handing on deltas as they come. */
function assemble(
  events: EventStream,
  onDelta: ModelRequest['onDelta'],
): Promise<OpenAI.Chat.ChatCompletion> {
  const stream = ChatCompletionStream.fromReadableStream(events);
  if (onDelta) {
    stream.on('content.delta', ({ delta }) => onDelta({ kind: 'text', text: delta }));
    stream.on('tool_calls.function.arguments.delta', ({ index, name, arguments_delta }) =>
      onDelta({ kind: 'tool-call', index, name, arguments: arguments_delta }),
    );
  }
  return stream.finalChatCompletion();
}

function toChatMessage(message: Message): ChatMessage {
  switch (message.role) {
    case 'user':
      return { role: 'user', content: message.content };
    case 'assistant':
      return {
        role: 'assistant',
        content: message.content,
        ...(message.toolCalls?.length
          ? {
              tool_calls: message.toolCalls.map((call) => ({
                id: call.id,
                type: 'function' as const,
                function: { name: call.name, arguments: call.arguments },
              })),
            }
          : {}),
      };
    case 'tool':
      return { role: 'tool', tool_call_id: message.toolCallId, content: message.content };
    default:
      return assertNever(message);
  }
}

function toChatTool(tool: ToolSpec): OpenAI.Chat.ChatCompletionFunctionTool {
  return {
    type: 'function',
    function: { name: tool.name, description: tool.description, parameters: tool.parameters },
  };
}

function fromCompletion(completion: OpenAI.Chat.ChatCompletion): ModelResponse {
  const reply = Array.isArray(completion.choices) ? completion.choices[0]?.message : undefined;
  if (!reply) throw malformedResponse('completion has no choices[0].message', completion);
  const toolCalls: ToolCallRequest[] = (reply.tool_calls ?? []).flatMap((call) =>
    call.type === 'function'
      ? [{ id: call.id, name: call.function.name, arguments: call.function.arguments }]
      : [],
  );
  const message: AssistantMessage = {
    role: 'assistant',
    content: reply.content ?? reply.refusal ?? null,
    ...(toolCalls.length === 0 ? {} : { toolCalls }),
  };
  const usage = completion.usage;
  const finishReason = completion.choices[0]?.finish_reason;
  return {
    message,
    ...(typeof completion.model === 'string' && { responseModel: completion.model }),
    ...(typeof finishReason === 'string' && { finishReason }),
    ...(usage
      ? {
          usage: {
            inputTokens: usage.prompt_tokens,
            outputTokens: usage.completion_tokens,
            totalTokens: usage.total_tokens,
            ...(usage.prompt_tokens_details?.cached_tokens && {
              cachedInputTokens: usage.prompt_tokens_details.cached_tokens,
            }),
          },
        }
      : {}),
  };
}
