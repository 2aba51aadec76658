import type { Message, RunContent } from '@cairn/engine';
import type { Attributes } from '@opentelemetry/api';
import {
  ATTR_GEN_AI_AGENT_NAME,
  ATTR_GEN_AI_INPUT_MESSAGES,
  ATTR_GEN_AI_OPERATION_NAME,
  ATTR_GEN_AI_OUTPUT_MESSAGES,
  ATTR_GEN_AI_PROVIDER_NAME,
  ATTR_GEN_AI_REQUEST_MODEL,
  ATTR_GEN_AI_RESPONSE_FINISH_REASONS,
  ATTR_GEN_AI_RESPONSE_MODEL,
  ATTR_GEN_AI_SYSTEM_INSTRUCTIONS,
  ATTR_GEN_AI_TOOL_CALL_ARGUMENTS,
  ATTR_GEN_AI_TOOL_CALL_ID,
  ATTR_GEN_AI_TOOL_CALL_RESULT,
  ATTR_GEN_AI_TOOL_NAME,
  ATTR_GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS,
  ATTR_GEN_AI_USAGE_INPUT_TOKENS,
  ATTR_GEN_AI_USAGE_OUTPUT_TOKENS,
  GEN_AI_OPERATION_NAME_VALUE_CHAT,
  GEN_AI_OPERATION_NAME_VALUE_EXECUTE_TOOL,
  GEN_AI_OPERATION_NAME_VALUE_INVOKE_AGENT,
} from '@opentelemetry/semantic-conventions/incubating';

/**
 * The one owner of how Cairn's spans follow OpenTelemetry's GenAI semantic
 * conventions (`@opentelemetry/semantic-conventions`, pinned: the GenAI
 * attributes are still incubating): a span's name and its `gen_ai.*`
 * attributes. Cairn's own ids stay `cairn.*` attributes, set by the tracer.
 * Message content is recorded only on opt-in ({@link contentAttributes}).
 */

/** A span's name and its conventional attributes. */
export interface GenAiSpan {
  name: string;
  attributes: Attributes;
}

/** A model label (`Model.name`, `provider:model`, e.g. `openai:gpt-5.4`) split into the conventions' provider and model. */
export function modelLabelParts(label: string): { provider: string | undefined; model: string } {
  const colon = label.indexOf(':');
  if (colon <= 0 || colon === label.length - 1) return { provider: undefined, model: label };
  return { provider: label.slice(0, colon), model: label.slice(colon + 1) };
}

/** `invoke_agent {name}`: one run of an agent or a team. */
export function invokeAgentSpan(entityName: string, provider: string | undefined): GenAiSpan {
  return {
    name: `${GEN_AI_OPERATION_NAME_VALUE_INVOKE_AGENT} ${entityName}`,
    attributes: {
      [ATTR_GEN_AI_OPERATION_NAME]: GEN_AI_OPERATION_NAME_VALUE_INVOKE_AGENT,
      [ATTR_GEN_AI_AGENT_NAME]: entityName,
      ...(provider !== undefined && { [ATTR_GEN_AI_PROVIDER_NAME]: provider }),
    },
  };
}

/** `chat {model}`: one model request (each retry its own span). */
export function chatSpan(modelLabel: string): GenAiSpan {
  const { provider, model } = modelLabelParts(modelLabel);
  return {
    name: `${GEN_AI_OPERATION_NAME_VALUE_CHAT} ${model}`,
    attributes: {
      [ATTR_GEN_AI_OPERATION_NAME]: GEN_AI_OPERATION_NAME_VALUE_CHAT,
      [ATTR_GEN_AI_REQUEST_MODEL]: model,
      ...(provider !== undefined && { [ATTR_GEN_AI_PROVIDER_NAME]: provider }),
    },
  };
}

/** A model response's token counts, as the conventions name them. */
export function chatUsageAttributes(usage: {
  inputTokens?: number;
  outputTokens?: number;
  cachedInputTokens?: number;
}): Attributes {
  return {
    [ATTR_GEN_AI_USAGE_INPUT_TOKENS]: usage.inputTokens,
    [ATTR_GEN_AI_USAGE_OUTPUT_TOKENS]: usage.outputTokens,
    ...(usage.cachedInputTokens !== undefined && {
      [ATTR_GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS]: usage.cachedInputTokens,
    }),
  };
}

/** What a model's answer says of itself: the model that answered and why it stopped. */
export function chatResponseAttributes(response: {
  responseModel?: unknown;
  finishReason?: unknown;
}): Attributes {
  return {
    ...(typeof response.responseModel === 'string' && {
      [ATTR_GEN_AI_RESPONSE_MODEL]: response.responseModel,
    }),
    ...(typeof response.finishReason === 'string' && {
      [ATTR_GEN_AI_RESPONSE_FINISH_REASONS]: [response.finishReason],
    }),
  };
}

/** A message part as the conventions' input and output message schemas shape it. */
type MessagePart =
  | { type: 'text'; content: string }
  | { type: 'tool_call'; id: string; name: string; arguments: unknown }
  | { type: 'tool_call_response'; id: string; response: string };

function partsOf(message: Message): MessagePart[] {
  switch (message.role) {
    case 'user':
      return [{ type: 'text', content: message.content }];
    case 'assistant':
      return [
        ...(message.content ? [{ type: 'text' as const, content: message.content }] : []),
        ...(message.toolCalls ?? []).map((call) => ({
          type: 'tool_call' as const,
          id: call.id,
          name: call.name,
          arguments: parsedOrRaw(call.arguments),
        })),
      ];
    case 'tool':
      return [{ type: 'tool_call_response', id: message.toolCallId, response: message.content }];
  }
}

function parsedOrRaw(json: string): unknown {
  try {
    return JSON.parse(json);
  } catch {
    return json;
  }
}

/**
 * The opt-in content attributes of a `chat` span (the request's system
 * instructions, its messages and the answer) or of an `execute_tool` span
 * (its arguments and result), as JSON strings in the conventions' shapes.
 */
export function contentAttributes(content: RunContent): Attributes {
  if (content.kind === 'tool')
    return {
      [ATTR_GEN_AI_TOOL_CALL_ARGUMENTS]: JSON.stringify(content.args),
      ...(content.result !== null && { [ATTR_GEN_AI_TOOL_CALL_RESULT]: content.result }),
    };
  const { message, finishReason } = content.response;
  return {
    ...(content.instructions !== '' && {
      [ATTR_GEN_AI_SYSTEM_INSTRUCTIONS]: JSON.stringify([
        { type: 'text', content: content.instructions },
      ]),
    }),
    [ATTR_GEN_AI_INPUT_MESSAGES]: JSON.stringify(
      content.messages.map((m) => ({ role: m.role, parts: partsOf(m) })),
    ),
    [ATTR_GEN_AI_OUTPUT_MESSAGES]: JSON.stringify([
      {
        role: 'assistant',
        parts: partsOf(message),
        ...(finishReason !== undefined && { finish_reason: finishReason }),
      },
    ]),
  };
}

/** `execute_tool {name}`: one tool call. */
export function executeToolSpan(toolName: string, toolCallId: string): GenAiSpan {
  return {
    name: `${GEN_AI_OPERATION_NAME_VALUE_EXECUTE_TOOL} ${toolName}`,
    attributes: {
      [ATTR_GEN_AI_OPERATION_NAME]: GEN_AI_OPERATION_NAME_VALUE_EXECUTE_TOOL,
      [ATTR_GEN_AI_TOOL_NAME]: toolName,
      [ATTR_GEN_AI_TOOL_CALL_ID]: toolCallId,
    },
  };
}
