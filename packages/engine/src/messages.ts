/** One tool call requested by the model in an assistant turn. */
export interface ToolCallRequest {
  /** The model's id for the call, echoed back in the tool result. */
  id: string;
  name: string;
  /** Raw JSON text of the arguments, exactly as the model produced it. */
  arguments: string;
}

/** The user's input to a run. */
export interface UserMessage {
  role: 'user';
  content: string;
}

/** A model turn: text, tool calls, or both. */
export interface AssistantMessage {
  role: 'assistant';
  content: string | null;
  toolCalls?: ToolCallRequest[];
}

/** The result of one tool call, as the model sees it. */
export interface ToolResultMessage {
  role: 'tool';
  toolCallId: string;
  name: string;
  content: string;
  /** True when the call failed (bad arguments, unknown tool, throw, timeout). */
  isError?: boolean;
}

/** A message of a run's history. System instructions are not stored: they come from the entity. */
export type Message = UserMessage | AssistantMessage | ToolResultMessage;

/** Token usage of one model response, or summed over a run's model calls. */
export interface Usage {
  inputTokens: number;
  outputTokens: number;
  totalTokens: number;
  /** Input tokens the provider served from its prompt cache (a part of `inputTokens`, billed at the cached price). */
  cachedInputTokens?: number;
  /** A run's cost in integer micro-dollars, at the prices in force when each response came (0 for a model with no price). */
  costMicroUsd?: number;
  /** A run's usage per model (`Model.name`). */
  byModel?: Record<string, ModelUsage>;
}

/** A run's usage of one model. */
export interface ModelUsage {
  inputTokens: number;
  cachedInputTokens: number;
  outputTokens: number;
  /** Integer micro-dollars. */
  costMicroUsd: number;
}
